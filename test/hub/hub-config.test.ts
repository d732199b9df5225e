import { describe, expect, it } from 'vitest'
import { HUB_MAX_CONNECTIONS } from '../../node/hub/hub-constants.ts'
import { HubUsageError, parseHubArgs } from '../../node/hub/hub-config.ts'
import { P2P } from '../../sync/p2p/constants.ts'

describe('svc hub --max-connections', () => {
  it('defaults to the hub’s limit, far above a daemon’s, and takes a positive integer', () => {
    expect(HUB_MAX_CONNECTIONS).toBeGreaterThan(P2P.maxConnections)
    expect(parseHubArgs(['--data', '/tmp/x']).maxConnections).toBe(HUB_MAX_CONNECTIONS)
    expect(parseHubArgs(['--data', '/tmp/x', '--max-connections', '300']).maxConnections).toBe(300)
    expect(() => parseHubArgs(['--data', '/tmp/x', '--max-connections', '0'])).toThrow(HubUsageError)
  })
})
