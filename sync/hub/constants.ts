/** Per-account quotas of a hub (docs/hub.md "Quotas"); the operator sets them (`svc hub --max-spaces` ...). */
export interface HubQuotas {
  /** Spaces one account may ask the hub to keep. */
  maxSpaces: number
  /** Bytes (changes and file blocks) of the spaces one account registered. */
  maxBytes: number
  /** Changes one account may bring per minute, over all spaces (a full minute may come at once). */
  changesPerMinute: number
}

/** The hub's bounds and defaults, in one place. */
export const HUB_DEFAULTS = {
  quotas: { maxSpaces: 1_000, maxBytes: 10 * 1024 ** 3, changesPerMinute: 120_000 } satisfies HubQuotas,
  /** Space ids remembered as kept by nobody (a stranger's guesses cost one registry read each, then this). */
  maxNotKeptCache: 4_096,
  /** How long such an answer stands before the registry is asked again (another process may register it). */
  notKeptRecheckMs: 5_000,
  /** Accounts whose change budgets and pending refusals are kept (the oldest are forgotten). */
  maxAccountBudgets: 16_384,
  maxRefusalsPerAccount: 256,
} as const
