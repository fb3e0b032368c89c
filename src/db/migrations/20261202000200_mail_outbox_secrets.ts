import { sql, type Kysely } from 'kysely';

// A mail that carries a one-time token (registration, recovery) keeps its body only until it is
// delivered: one_time_tokens holds nothing but hashes, and the outbox holding the plaintext for
// the token's life would undo that for anyone who can read the database (docs/authentication.md).
// `holds_secret` marks such a mail; once SMTP has accepted it, the body is replaced by a note
// (src/modules/mail/jobs.ts). Mail already sent is struck the same way. Mail kept because
// SMTP_URL is unset keeps its body: the outbox and the log are then how it is delivered.
// `send_before` is when the token ends: a mail not delivered by then is not sent at all (a token
// that no longer works, mailed days late when SMTP comes back, is only confusing).
// As src/modules/mail/outbox.ts writes it (a migration keeps its own copy).
const SENT_SECRET_NOTE = '(removed after delivery: this mail held a one-time token)';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE mail_outbox ADD COLUMN holds_secret boolean NOT NULL DEFAULT false;
    ALTER TABLE mail_outbox ADD COLUMN send_before timestamptz;
    UPDATE mail_outbox SET holds_secret = true, send_before = created_at + interval '24 hours' WHERE kind IN ('registration', 'recovery');
    UPDATE mail_outbox SET text_body = ${sql.lit(SENT_SECRET_NOTE)}, html_body = NULL WHERE holds_secret AND sent_at IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE mail_outbox DROP COLUMN holds_secret, DROP COLUMN send_before`.execute(db);
}
