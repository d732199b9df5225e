/**
 * `PATCH /markdown`: exact-text edits against the rendering, all or nothing.
 */
import { SvcError } from '../../core/errors.ts'
import type { MarkdownEdit } from './types.ts'

/** Start offsets of every occurrence of `needle`, overlapping ones included. */
function occurrences(haystack: string, needle: string): number[] {
  const out: number[] = []
  let at = haystack.indexOf(needle)
  while (at >= 0) {
    out.push(at)
    at = haystack.indexOf(needle, at + 1)
  }
  return out
}

interface Range {
  start: number
  end: number
  edit: number
}

/**
 * Apply `edits` to `rendered` (the current GET /markdown text) and return the new markdown.
 *
 * Every `oldText` is matched against the original rendering, not against the result of earlier
 * edits. Without `replaceAll` it must occur exactly once (occurrences are counted overlapping,
 * so `aa` in `aaa` is ambiguous); with it, every non-overlapping occurrence from the left is
 * replaced (at least one must exist). Errors, checked in this order, nothing applied on any:
 * - 400 `markdown.no_match` `{editIndex}`: `oldText` does not occur;
 * - 400 `markdown.ambiguous_match` `{editIndex, occurrences}`: more than one occurrence;
 * - 400 `markdown.overlapping_edits` `{editIndices: [i, j]}`: two edits touch the same text;
 * - 400 `request.invalid_field` `{field, editIndex}`: an empty `oldText`.
 */
export function applyEdits(rendered: string, edits: MarkdownEdit[]): string {
  const ranges: Range[] = []
  edits.forEach((e, i) => {
    if (typeof e.oldText !== 'string' || e.oldText === '') {
      throw new SvcError('request.invalid_field', `edit ${i}: oldText must be a non-empty string`, { field: `edits.${i}.oldText`, editIndex: i })
    }
    if (typeof e.newText !== 'string') {
      throw new SvcError('request.invalid_field', `edit ${i}: newText must be a string`, { field: `edits.${i}.newText`, editIndex: i })
    }
    const found = occurrences(rendered, e.oldText)
    if (found.length === 0) throw new SvcError('markdown.no_match', `edit ${i}: oldText does not occur in the document`, { editIndex: i })
    if (e.replaceAll === true) {
      let last = -1
      for (const at of found) {
        if (at < last) continue
        ranges.push({ start: at, end: at + e.oldText.length, edit: i })
        last = at + e.oldText.length
      }
    } else {
      if (found.length > 1) {
        throw new SvcError('markdown.ambiguous_match', `edit ${i}: oldText occurs ${found.length} times; add context or set replaceAll`, {
          editIndex: i,
          occurrences: found.length,
        })
      }
      ranges.push({ start: found[0], end: found[0] + e.oldText.length, edit: i })
    }
  })
  ranges.sort((x, y) => x.start - y.start || x.end - y.end || x.edit - y.edit)
  for (let k = 1; k < ranges.length; k++) {
    const prev = ranges[k - 1]
    const cur = ranges[k]
    if (cur.start < prev.end) {
      const editIndices = [prev.edit, cur.edit].sort((x, y) => x - y)
      throw new SvcError('markdown.overlapping_edits', `edits ${editIndices[0]} and ${editIndices[1]} overlap`, { editIndices })
    }
  }
  let out = ''
  let at = 0
  for (const r of ranges) {
    out += rendered.slice(at, r.start) + edits[r.edit].newText
    at = r.end
  }
  return out + rendered.slice(at)
}
