/**
 * SQL (a boolean expression) that is true while some session of this database holds the two-key
 * advisory lock (`classId`, `key`), read from pg_locks without taking it. Both arguments are SQL
 * expressions of type int (a parameter such as `$1::int`, a column, `hashtext(...)`). How a
 * process tells whether the process that took a session lock is still alive: PostgreSQL releases
 * it when the session ends.
 */
export function advisoryLockHeldSql(classId: string, key: string): string {
  return `EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = (${classId})::oid AND l.objid = (${key})::oid)`;
}
