import pino from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { createLogger } from '../../logger.ts';
import { openRuntime } from '../../runtime.ts';
import { auditWallets, type AuditFinding } from './audit.ts';

const USAGE = 'Usage: regwatch wallet audit';

export interface WalletCommandContext {
  config: Config;
  argv: string[];
  /** Where the report goes (stdout by default). */
  out?: (line: string) => void;
}

/** Runs the audit in one snapshot and reports it; 0 when clean, 1 when any mismatch exists. */
export async function runWalletAudit(db: Db, out: (line: string) => void): Promise<number> {
  const report = await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute((trx) => auditWallets(trx));
  for (const f of report.findings) out(formatFinding(f));
  const n = report.findings.length;
  out(
    `Audited ${report.wallets} wallet(s) and ${report.transactions} transaction(s): ${n === 0 ? 'every ledger matches its balance.' : `${n} mismatch${n === 1 ? '' : 'es'}.`}`,
  );
  return n === 0 ? 0 : 1;
}

export function formatFinding(f: AuditFinding): string {
  return `MISMATCH account ${f.userRef ?? '?'} (id ${f.accountId}): ${f.problem}`;
}

/** `regwatch wallet audit`: checks that every account's ledger sums to its balance. */
export async function walletCommand(ctx: WalletCommandContext): Promise<number> {
  const [sub, ...rest] = ctx.argv;
  if (sub !== 'audit' || rest.length > 0) {
    console.error(sub ? `regwatch wallet: unknown arguments "${ctx.argv.join(' ')}"\n${USAGE}` : USAGE);
    return 2;
  }
  const logger = createLogger(ctx.config.logLevel, pino.destination({ dest: 2, sync: true }));
  const rt = await openRuntime(ctx.config, logger, { poolSize: 2 });
  try {
    return await runWalletAudit(rt.database.db, ctx.out ?? ((line) => console.log(line)));
  } finally {
    await rt.close();
  }
}
