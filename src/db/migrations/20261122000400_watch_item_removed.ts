import { sql, type Kysely } from 'kysely';

// A value still queued in an add request can be removed before the job settles it: the item ends
// 'removed' (never watched, refunded when the request completes). docs/watchlist.md, "Removing a
// value that is still queued".
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE watch_request_items DROP CONSTRAINT watch_request_items_status_check;
    ALTER TABLE watch_request_items ADD CONSTRAINT watch_request_items_status_check
      CHECK (status IN ('queued', 'watched', 'already_watched', 'already_queued', 'not_found', 'removed'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE watch_request_items SET status = 'not_found' WHERE status = 'removed';
    ALTER TABLE watch_request_items DROP CONSTRAINT watch_request_items_status_check;
    ALTER TABLE watch_request_items ADD CONSTRAINT watch_request_items_status_check
      CHECK (status IN ('queued', 'watched', 'already_watched', 'already_queued', 'not_found'));
  `.execute(db);
}
