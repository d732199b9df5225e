import { defineConfig } from 'vitest/config'

// Dependencies load as Node loads them for the daemon, in their production builds. Vitest sets
// NODE_ENV=test, for which Vite resolves the `development` export condition, whose debug builds
// (micromark, mdast) assert on inputs the shipped builds parse (test/editor/markdown.test.ts,
// "parsing runs the libraries as the daemon does"). Vite reads this after the config file.
process.env.NODE_ENV = 'production'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    setupFiles: ['test/setup/fast-check.ts', 'test/setup/processes.ts'],
    // Tests never announce anything on a real network: mDNS is off and P2P listens on loopback
    // unless a test turns them on itself (and those run only inside netns-run).
    env: { SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' },
  },
})
