import pkg from '../package.json' with { type: 'json' }

/** The release version reported by `GET /v1/health` and the OpenAPI document. */
export const VERSION: string = pkg.version
