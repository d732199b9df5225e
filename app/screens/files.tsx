import { useEffect, useState } from 'preact/hooks'
import { ApiError, call, describe, objectPath, spacePath } from '../api.ts'
import { usePoll } from '../hooks.ts'
import { PAGE_XKEY } from './docs.tsx'

export interface FileInfo {
  id: string
  objectId: string
  name: string
  mime: string
  size: number
  state: string
  cached: boolean
  pinned: boolean
  blocks: number
  cachedBlocks: number
}

/** Types a preview is asked for (variants are raster images). */
export const isImage = (mime: string) => /^image\/(png|jpeg|gif|webp|avif)$/.test(mime)

/**
 * Attaches `file` to an object. XMLHttpRequest rather than fetch because only it reports upload
 * progress; the body is the raw bytes, as the attach route takes them.
 */
export function uploadFile(spaceId: string, objectId: string, file: File, onProgress: (fraction: number) => void): Promise<{ fileId: string; uri: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    const q = new URLSearchParams({ name: file.name, mime: file.type || 'application/octet-stream' })
    xhr.open('POST', `${objectPath(spaceId, objectId)}/files?${q.toString()}`)
    xhr.setRequestHeader('content-type', 'application/octet-stream')
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total)
    xhr.onerror = () => reject(new ApiError('daemon.unreachable', 'the upload did not reach the daemon', 0))
    xhr.onload = () => {
      const body = JSON.parse(xhr.responseText || '{}') as { fileId?: string; uri?: string; error?: { code: string; message: string } }
      if (xhr.status >= 200 && xhr.status < 300 && body.fileId) resolve({ fileId: body.fileId, uri: body.uri ?? '' })
      else reject(new ApiError(body.error?.code ?? `http.${xhr.status}`, body.error?.message ?? 'upload failed', xhr.status))
    }
    xhr.send(file)
  })
}

/**
 * An image through its 512-pixel variant, fetched as bytes and shown from a `blob:` URL: the
 * page never points an element at a user file's URL, so nothing of the file can run here.
 */
export function FileImage({ spaceId, fileId, alt }: { spaceId: string; fileId: string; alt: string }) {
  const [url, setUrl] = useState<string | undefined>(undefined)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    let made: string | undefined
    let live = true
    const load = async () => {
      for (let attempt = 0; attempt < 30 && live; attempt++) {
        const res = await fetch(`${spacePath(spaceId)}/files/${encodeURIComponent(fileId)}/content?variant=w512`).catch(() => undefined)
        if (res?.ok) {
          made = URL.createObjectURL(await res.blob())
          if (live) setUrl(made)
          return
        }
        // The bytes may still be on their way from a peer.
        await new Promise((r) => setTimeout(r, 1000))
      }
      if (live) setFailed(true)
    }
    void load()
    return () => {
      live = false
      if (made) URL.revokeObjectURL(made)
    }
  }, [spaceId, fileId])
  if (failed) return <span class="muted">Preview unavailable</span>
  return url ? <img class="preview" src={url} alt={alt} data-testid="image-preview" /> : <span class="muted">Loading preview…</span>
}

async function download(spaceId: string, f: FileInfo): Promise<void> {
  const res = await fetch(`${spacePath(spaceId)}/files/${encodeURIComponent(f.id)}/content`)
  if (!res.ok) throw new ApiError(`http.${res.status}`, 'download failed', res.status)
  const url = URL.createObjectURL(await res.blob())
  const a = document.createElement('a')
  a.href = url
  a.download = f.name
  a.click()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** The object files dropped on the Files screen attach to: one page named "Shared files", made on first use. */
async function sharedFilesObject(spaceId: string): Promise<string> {
  const S = spacePath(spaceId)
  const { types } = await call<{ types: Array<{ id: string; xKey: string }> }>('GET', `${S}/types?includeHidden=true`)
  let typeId = types.find((t) => t.xKey === PAGE_XKEY)?.id
  if (!typeId) {
    typeId = (await call<{ id: string }>('POST', `${S}/types`, { name: 'Page', xKey: PAGE_XKEY })).id
    await call('POST', `${S}/types/${encodeURIComponent(typeId)}/parts`, { key: 'body', name: 'Body', datasets: [{ module: 'editor', shared: true }] })
  }
  const found = await call<{ records: Array<{ id: string }> }>('POST', `${S}/objects/query`, { filter: { 'core.types': typeId, 'core.name': 'Shared files' }, limit: 1 })
  if (found.records[0]) return found.records[0].id
  return (await call<{ objectId: string }>('POST', `${S}/objects`, { types: [typeId], initialProperties: { core: { name: 'Shared files' } } })).objectId
}

export function Uploads({ uploads }: { uploads: Array<{ name: string; fraction: number }> }) {
  return (
    <ul class="plain uploads">
      {uploads.map((u, i) => (
        <li key={i}>
          <label>
            {u.name} <progress max={1} value={u.fraction} />
          </label>
        </li>
      ))}
    </ul>
  )
}

export function FilesScreen({ spaceId, readOnly }: { spaceId: string; readOnly: boolean }) {
  const files = usePoll(() => call<{ files: FileInfo[] }>('GET', `${spacePath(spaceId)}/files`), 2000, [spaceId])
  const [uploads, setUploads] = useState<Array<{ name: string; fraction: number }>>([])
  const [over, setOver] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)

  const attach = async (list: FileList | null) => {
    if (!list || list.length === 0) return
    setError(undefined)
    try {
      const objectId = await sharedFilesObject(spaceId)
      for (const file of Array.from(list)) {
        const slot = { name: file.name, fraction: 0 }
        setUploads((u) => [...u, slot])
        await uploadFile(spaceId, objectId, file, (fraction) => {
          slot.fraction = fraction
          setUploads((u) => [...u])
        })
        setUploads((u) => u.filter((x) => x !== slot))
      }
    } catch (err) {
      setError(describe(err))
    }
  }
  const act = async (what: () => Promise<unknown>) => {
    try {
      await what()
    } catch (err) {
      setError(describe(err))
    }
  }

  return (
    <div class="files">
      {!readOnly && (
        <div
          class={`dropzone${over ? ' over' : ''}`}
          onDragOver={(e) => {
            e.preventDefault()
            setOver(true)
          }}
          onDragLeave={() => setOver(false)}
          onDrop={(e) => {
            e.preventDefault()
            setOver(false)
            void attach(e.dataTransfer?.files ?? null)
          }}
        >
          <label>
            Drop files here, or choose them: <input type="file" multiple onChange={(e) => void attach((e.target as HTMLInputElement).files)} />
          </label>
        </div>
      )}
      <Uploads uploads={uploads} />
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Preview</th>
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col">Durability</th>
            <th scope="col">On this device</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(files.value?.files ?? []).map((f) => (
            <tr key={f.id} data-file={f.name}>
              <td>{isImage(f.mime) ? <FileImage spaceId={spaceId} fileId={f.id} alt={f.name} /> : <span class="muted">{f.mime}</span>}</td>
              <td>{f.name}</td>
              <td>{formatBytes(f.size)}</td>
              <td>
                <span class={`pill pill-${f.state}`} title="durable: another device or hub holds the bytes; inflight: only here so far">
                  {f.state}
                </span>
              </td>
              <td>
                {f.cached ? 'cached' : `${f.cachedBlocks}/${f.blocks} blocks`}
                {f.pinned ? ', pinned' : ''}
              </td>
              <td class="row compact">
                <button onClick={() => void act(() => download(spaceId, f))}>Download</button>
                {!f.pinned && <button onClick={() => void act(() => call('POST', `${spacePath(spaceId)}/files/${encodeURIComponent(f.id)}/pin`))}>Keep offline</button>}
                <button onClick={() => void act(() => call('POST', `${spacePath(spaceId)}/files/${encodeURIComponent(f.id)}/offload`))}>Free space</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / 1024 / 1024).toFixed(1)} MiB`
}
