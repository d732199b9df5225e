import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { API_TYPES_FILE, currentOpenApiDocument, generateApiTypes } from '../../server/client/generate.ts'

describe('the typed client', () => {
  it('server/client/api-types.ts is what the current OpenAPI document generates (npm run gen:client)', async () => {
    const doc = await currentOpenApiDocument()
    const fresh = await generateApiTypes(doc)
    const committed = readFileSync(API_TYPES_FILE, 'utf8')
    // A route added or a schema changed without regenerating: run `npm run gen:client`.
    expect(committed === fresh, 'server/client/api-types.ts is stale: run `npm run gen:client`').toBe(true)
    expect(committed).toContain('"/v1/spaces/{spaceId}/types"')
  }, 120_000)
})
