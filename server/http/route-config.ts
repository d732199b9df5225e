/** Per-route options read by the app's hooks (`config: {...}` on a route). */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable before an account is booted (spec Conventions 7); every other route answers 401. */
    public?: boolean
    /**
     * 'drop': unknown top-level body keys are removed instead of failing (spec: `/modify`,
     * `/aggregate`); give such a route a body schema without `additionalProperties: false`.
     */
    unknownKeys?: 'reject' | 'drop'
    /**
     * The route reads its own request body as a stream (an upload): no body timeout
     * (server/http/body-timeout.ts). Give it its own `bodyLimit` (route option) and its own
     * content-type parser inside its plugin; the app's 1 MB limit and JSON parser then do not
     * apply to it. docs/api.md "HTTP edges".
     */
    streamedBody?: boolean
    /**
     * The route serves while spaces' object rows still load after a restart (the search, from
     * its saved index; the process list). Every other route waits first: for the space it names
     * (`spaceId` in path, query or body), or for every space when it names none (server/app.ts).
     */
    whileSpaceLoads?: boolean
    /**
     * The route serves file bytes as passive content (server/http/content-policy.ts), so a
     * document of the API's own origin may load it: a video or image opened in a tab fetches
     * its own ranges. Every other route refuses requests a browser marks `Sec-Fetch-Site:
     * same-origin` (server/http/security.ts).
     */
    passiveContent?: boolean
    /** The route serves the web app's own files (server/http/app-static.ts): the app may reload itself. */
    webApp?: boolean
    /**
     * A mutating method that only reads (a snapshot query, an aggregate, a search, a live
     * query): it keeps working when the account was written by a newer release and the server
     * is read-only (server/http/read-only.ts). Routes of other files get it from that file's list.
     */
    reads?: boolean
  }
}

export {}
