/** Head sync's view of the sharing port (defined in core, where the account engine sees it too). */
export type { JoinStatus, JoinStatusEvent, Offer, SharingNetwork } from '../core/sharing-network.ts'
