import { sql, type Kysely } from 'kysely';

// Migrations never import app code: they describe the schema as it was on their day.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE accounts (
      id bigserial PRIMARY KEY,
      user_ref text NOT NULL UNIQUE,
      email text NOT NULL UNIQUE,
      name text NOT NULL,
      status text NOT NULL CHECK (status IN ('registered', 'initialized')),
      created_at timestamptz NOT NULL DEFAULT now(),
      initialized_at timestamptz
    );

    CREATE TABLE one_time_tokens (
      id bigserial PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      purpose text NOT NULL CHECK (purpose IN ('init', 'recover')),
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX one_time_tokens_account_idx ON one_time_tokens (account_id, purpose);

    CREATE TABLE api_tokens (
      id bigserial PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      token_ref text NOT NULL UNIQUE,
      kind text NOT NULL CHECK (kind IN ('master', 'api')),
      name text NOT NULL,
      secret_hash text NOT NULL UNIQUE,
      lifetime_days integer,
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      last_used_ip text,
      usage_count bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX api_tokens_account_idx ON api_tokens (account_id, created_at);
    -- At most one active Master Token per account.
    CREATE UNIQUE INDEX api_tokens_one_master_idx ON api_tokens (account_id) WHERE kind = 'master' AND revoked_at IS NULL;

    CREATE TABLE wallets (
      account_id bigint PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
      balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
      total_purchased bigint NOT NULL DEFAULT 0 CHECK (total_purchased >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE wallet_transactions (
      id bigserial PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES wallets(account_id) ON DELETE CASCADE,
      type text NOT NULL CHECK (type IN ('start', 'deposit', 'usage', 'refund')),
      amount bigint NOT NULL,
      balance_after bigint NOT NULL CHECK (balance_after >= 0),
      description text NOT NULL,
      reference text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX wallet_transactions_account_idx ON wallet_transactions (account_id, id DESC);
    CREATE UNIQUE INDEX wallet_transactions_reference_idx ON wallet_transactions (account_id, reference) WHERE reference IS NOT NULL;

    CREATE TABLE mail_outbox (
      id bigserial PRIMARY KEY,
      kind text NOT NULL,
      to_address text NOT NULL,
      subject text NOT NULL,
      text_body text NOT NULL,
      html_body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      message_id text
    );
    CREATE INDEX mail_outbox_unsent_idx ON mail_outbox (id) WHERE sent_at IS NULL;

    CREATE TABLE payments (
      id bigserial PRIMARY KEY,
      payment_ref text NOT NULL UNIQUE,
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      provider text NOT NULL CHECK (provider IN ('dev', 'stripe')),
      provider_session_id text UNIQUE,
      package_slug text NOT NULL,
      credits integer NOT NULL CHECK (credits > 0),
      amount integer NOT NULL CHECK (amount > 0),
      currency text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'confirmed', 'failed', 'expired')),
      checkout_url text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX payments_account_idx ON payments (account_id, created_at DESC);
    CREATE INDEX payments_pending_idx ON payments (expires_at) WHERE status = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE payments, mail_outbox, wallet_transactions, wallets, api_tokens, one_time_tokens, accounts`.execute(db);
}
