/** Per-peer counters: traffic, and every drop or refusal with its reason. */
export interface PeerCounters {
  messagesIn: number
  messagesOut: number
  bytesIn: number
  bytesOut: number
  /** Messages dropped, by reason (ProtocolError codes, bad_auth, unauthenticated, ...). */
  dropped: Record<string, number>
  /** Space messages refused because the peer cannot read the space. */
  denied: number
  changesIn: number
  changesAccepted: number
  changesOut: number
  /** Changes the replica refused, by RejectReason. */
  rejected: Record<string, number>
}

export const newCounters = (): PeerCounters => ({
  messagesIn: 0,
  messagesOut: 0,
  bytesIn: 0,
  bytesOut: 0,
  dropped: {},
  denied: 0,
  changesIn: 0,
  changesAccepted: 0,
  changesOut: 0,
  rejected: {},
})

export const bump = (rec: Record<string, number>, k: string, n = 1) => {
  rec[k] = (rec[k] ?? 0) + n
}
