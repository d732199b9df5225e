/** How a variant process ended (its exit code): read by variant-process.ts, set by variant-child.ts. */
export const VARIANT_EXIT = { ok: 0, tooLarge: 3, notImage: 4 } as const
