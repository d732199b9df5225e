import { Type } from '@sinclair/typebox'
import { ACCOUNT_ID_PATTERN } from '../../node/account/layout.ts'
import { MAX_MNEMONIC_LENGTH } from '../../sync/core/limits.ts'
import { Instant } from './common.ts'

export const AccountId = Type.String({ pattern: ACCOUNT_ID_PATTERN, description: 'base58 account public key' })

export const Health = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  startedAt: Instant,
  account: Type.String({ description: 'booted account id; empty string while unauthorized' }),
  bootstrapping: Type.Boolean(),
  crdtVersion: Type.Object({
    supported: Type.Integer(),
    stored: Type.Union([Type.Integer(), Type.Null()], { description: 'null while unauthorized' }),
    newer: Type.Boolean({ description: 'true: written by a newer release; the server is read-only' }),
  }),
})

export const AuthStatus = Type.Object({
  authorized: Type.Boolean(),
  accountId: Type.Optional(AccountId),
  mode: Type.Union([Type.Literal('standalone'), Type.Literal('managed')]),
  capabilities: Type.Object({ deauthorize: Type.Boolean(), switchAccount: Type.Boolean(), shutdown: Type.Boolean() }),
  accounts: Type.Array(Type.Object({ id: AccountId, default: Type.Optional(Type.Boolean()) }), {
    description: 'wallets on disk (standalone only; empty on managed)',
  }),
})

export const AuthBody = Type.Object(
  {
    mnemonic: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_MNEMONIC_LENGTH, description: 'BIP39 phrase: restore' })),
    index: Type.Optional(Type.Integer({ minimum: 0, maximum: 0x7fffffff, description: 'derivation index, default 1' })),
    replace: Type.Optional(Type.Boolean({ description: 'managed: switch from the running account' })),
    accountId: Type.Optional({ ...AccountId, description: 'standalone: select an account on disk' }),
  },
  { additionalProperties: false },
)

export const AuthResult = Type.Object({
  accountId: AccountId,
  created: Type.Boolean({ description: 'this call wrote a new wallet key file' }),
  mnemonic: Type.Optional(Type.String({ description: 'only when generated; shown once, never stored' })),
  alreadyAuthorized: Type.Optional(Type.Boolean()),
})
