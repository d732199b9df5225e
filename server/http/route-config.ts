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
     * The route serves a space whose object rows still load after a restart (the search, from
     * its saved index). Every other route with a `spaceId` waits for them first (server/app.ts).
     */
    whileSpaceLoads?: boolean
  }
}

export {}
