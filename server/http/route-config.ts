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
  }
}

export {}
