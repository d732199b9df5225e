import { seedSuite } from './seeds.ts'

seedSuite(101, 200)
