import type { RegistryTables } from '../registry/tables.ts';
import type { WatchlistTables } from '../modules/watchlist/tables.ts';
import type { WebhookTables } from '../modules/webhooks/tables.ts';
import type { ColumnType, Generated } from 'kysely';

/** Timestamps come back as Date; inserts may pass Date or ISO strings. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** bigint columns come back as strings from pg; we parse where needed. */
/** A timestamp with a database default. */
export type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** bigint with a database default. */
export type GeneratedBigInt = ColumnType<string, number | bigint | string | undefined, number | bigint | string>;
export type BigIntColumn = ColumnType<string, number | bigint | string, number | bigint | string>;

export interface AccountsTable {
  id: Generated<string>;
  user_ref: string;
  email: string;
  name: string;
  status: 'registered' | 'initialized';
  created_at: GeneratedTimestamp;
  initialized_at: Timestamp | null;
}

export interface OneTimeTokensTable {
  id: Generated<string>;
  account_id: string;
  purpose: 'init' | 'recover';
  token_hash: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  created_at: GeneratedTimestamp;
}

export interface ApiTokensTable {
  id: Generated<string>;
  account_id: string;
  token_ref: string;
  kind: 'master' | 'api';
  name: string;
  secret_hash: string;
  /** Days the token lives from creation (rotation repeats it); null: never expires. */
  lifetime_days: number | null;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  last_used_ip: string | null;
  usage_count: GeneratedBigInt;
  created_at: GeneratedTimestamp;
}

export interface WalletsTable {
  account_id: string;
  balance: BigIntColumn;
  total_purchased: BigIntColumn;
  updated_at: GeneratedTimestamp;
}

export interface WalletTransactionsTable {
  id: Generated<string>;
  account_id: string;
  type: 'start' | 'deposit' | 'usage' | 'refund';
  amount: BigIntColumn;
  balance_after: BigIntColumn;
  description: string;
  /** Idempotency key: one ledger row per (account, reference) at most. */
  reference: string | null;
  created_at: GeneratedTimestamp;
}

export interface MailOutboxTable {
  id: Generated<string>;
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  /** A one-time token is in the body: struck once delivered (migration 20261202000200). */
  holds_secret: Generated<boolean>;
  /** Not sent once this has passed: the one-time token it carries no longer works. */
  send_before: Timestamp | null;
  created_at: GeneratedTimestamp;
  sent_at: Timestamp | null;
  attempts: Generated<number>;
  last_error: string | null;
  message_id: string | null;
}

export interface PaymentsTable {
  id: Generated<string>;
  payment_ref: string;
  account_id: string;
  provider: 'dev' | 'stripe';
  provider_session_id: string | null;
  package_slug: string;
  credits: number;
  amount: number;
  currency: string;
  status: 'pending' | 'confirmed' | 'failed' | 'expired';
  checkout_url: string | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  expires_at: Timestamp;
  /** When the payment reached its final state; null while pending (migration 20261121000300). */
  completed_at: Timestamp | null;
}

export interface Database extends RegistryTables, WatchlistTables, WebhookTables {
  accounts: AccountsTable;
  one_time_tokens: OneTimeTokensTable;
  api_tokens: ApiTokensTable;
  wallets: WalletsTable;
  wallet_transactions: WalletTransactionsTable;
  mail_outbox: MailOutboxTable;
  payments: PaymentsTable;
}
