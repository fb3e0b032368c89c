import type { Task } from 'graphile-worker';
import type { Logger } from 'pino';
import type { JobModule } from '../../jobs/queue.ts';
import { TASKS } from '../../jobs/tasks.ts';
import type { WalletService } from './service.ts';

// No dot: graphile-worker's crontab accepts only [_a-zA-Z0-9:/-] in task names.
export const EXPIRE_PAYMENTS_TASK = TASKS.expirePayments;

/**
 * `wallet:expire-payments` (every 5 minutes, UTC crontab): closes pending payments past their
 * expiry, asking the provider first. Safe to run twice or concurrently: every state change is
 * a conditional update of a pending row.
 */
export function createWalletJobs(deps: { wallet: WalletService; logger: Logger }): JobModule {
  const { wallet } = deps;
  const expire: Task = async () => {
    const counts = await wallet.expireStalePayments();
    if (counts.expired + counts.confirmed + counts.failed + counts.left > 0)
      deps.logger.info({ payments: counts }, 'stale payments handled');
  };
  return {
    tasks: { [EXPIRE_PAYMENTS_TASK]: expire },
    crontab: [`*/5 * * * * ${EXPIRE_PAYMENTS_TASK} ?max=3&jobKey=${EXPIRE_PAYMENTS_TASK}&jobKeyMode=preserve_run_at`],
  };
}
