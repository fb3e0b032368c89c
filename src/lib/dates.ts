/** Calendar dates as the API and the registry write them. */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A real calendar date written YYYY-MM-DD, from 0001-01-01 (PostgreSQL's `date` has no year 0).
 * setUTCFullYear rather than Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
 */
export function isIsoDate(s: string): boolean {
  const m = ISO_DATE.exec(s);
  if (!m) return false;
  const [y, mo, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y === 0) return false;
  const d = new Date(0);
  d.setUTCFullYear(y, mo - 1, day);
  return d.getUTCFullYear() === y && d.getUTCMonth() === mo - 1 && d.getUTCDate() === day;
}
/** `date` (YYYY-MM-DD) moved by `days` (negative: back), in UTC. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The UTC calendar date of an instant. */
export function utcDate(at: Date): string {
  return at.toISOString().slice(0, 10);
}
