import type { FastifyInstance } from 'fastify'

/**
 * Body parsing (spec Conventions 1): JSON only. `text/plain` bodies are refused (415) instead
 * of reaching routes as strings; an empty JSON body counts as no body, so body-less routes
 * accept a stray `Content-Type: application/json` and body routes answer 400 `request.bad_json`.
 */
export function installBodyParsing(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser(['text/plain', 'application/json'])
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined)
    else parseJson(request, body as string, done)
  })
}
