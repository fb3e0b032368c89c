/** Days as numbers (days since 1970-01-01) and back: the synthetic registry counts in days. */

const DAY_MS = 86_400_000;

export function parseDay(date: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const t = new Date(0).setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (new Date(t).toISOString().slice(0, 10) !== date) throw new RangeError(`not a real date: ${date}`);
  return t / DAY_MS;
}

/** Days since 1970-01-01 to `YYYY-MM-DD` (Hinnant's civil-from-days; Date is slow in this loop). */
export function formatDay(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y < 1000 ? String(y).padStart(4, '0') : y}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

export const PKD_2025_DAY = parseDay('2025-01-01');
export const KRS_START_DAY = parseDay('2001-01-01');
export const PSA_START_DAY = parseDay('2021-07-01');
