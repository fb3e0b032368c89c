import { sql, type Kysely } from 'kysely';

// API processes keep the tokens they have seen in memory (src/modules/tokens/token-cache.ts); a
// change that may refuse a token or alter who it acts as (revocation, expiry, rename, its account's
// details, a deletion) tells every process at once on the channel `regwatch_auth`, with `t:<token
// id>` or `a:<account id>`. Usage counters (usage_count, last_used_*) do not notify.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_auth_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_notify('regwatch_auth', CASE TG_TABLE_NAME WHEN 'api_tokens' THEN 't:' ELSE 'a:' END || OLD.id);
      RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER api_tokens_notify_auth
      AFTER UPDATE OF revoked_at, expires_at, name, kind, secret_hash, account_id OR DELETE ON api_tokens
      FOR EACH ROW EXECUTE FUNCTION notify_auth_change();
    CREATE TRIGGER accounts_notify_auth
      AFTER UPDATE OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION notify_auth_change();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER accounts_notify_auth ON accounts;
    DROP TRIGGER api_tokens_notify_auth ON api_tokens;
    DROP FUNCTION notify_auth_change();
  `.execute(db);
}
