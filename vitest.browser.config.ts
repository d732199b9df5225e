import { defineConfig } from 'vitest/config'

process.env.NODE_ENV = 'production'

/**
 * The browser suite (`npm run test:browser`): real headless Chromium (Debian's /usr/bin/chromium
 * through playwright-core, no browser download) against pages bundled from sync/browser and a
 * real daemon. Its files end in `.browser.ts`, which `npm test`'s pattern (`*.test.ts`) never
 * picks up. One file at a time: each runs a browser and possibly a daemon on a 2-core machine.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    env: { SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' },
  },
})
