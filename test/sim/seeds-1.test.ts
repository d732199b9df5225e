import { seedSuite } from './seeds.ts'

// CI runs seeds 1..200 in two files, so vitest spreads them over both cores.
seedSuite(1, 100)
