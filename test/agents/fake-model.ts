import { createServer, type Server } from 'node:http'

/** A local OpenAI-compatible chat-completions server the test starts (the model is outside this machine). */
export async function fakeModel(answer: (lastUser: string) => string = (q) => `echo: ${q}`) {
  const requests: Array<{ model: string; messages: Array<{ role: string; content: string }> }> = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end()
        return
      }
      const parsed = JSON.parse(body)
      requests.push(parsed)
      const last = [...parsed.messages].reverse().find((m: { role: string }) => m.role === 'user')?.content ?? ''
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: answer(last) } }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return { url: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise<void>((r) => server.close(() => r())) }
}
