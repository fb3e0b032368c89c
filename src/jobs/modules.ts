import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import { createAccountJobs } from '../modules/accounts/service.ts';
import { createMailJobs } from '../modules/mail/jobs.ts';
import { createWalletJobs } from '../modules/wallet/jobs.ts';
import { createRegistryJobs } from '../registry/jobs.ts';
import { createWatchlistJobs } from '../modules/watchlist/jobs.ts';
import { createWebhooksModule } from '../modules/webhooks/module.ts';
import type { JobModule } from './queue.ts';

export interface JobDeps {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
}

/** Every module's jobs, for the worker. One line a module. */
export function createJobModules(deps: JobDeps): { modules: JobModule[]; close(): void } {
  const mail = createMailJobs({ db: deps.db, logger: deps.logger, clock: deps.clock, smtpUrl: deps.config.smtpUrl, mailFrom: deps.config.mailFrom });
  const modules: JobModule[] = [
    mail,
    createAccountJobs({ db: deps.db, clock: deps.clock, publicBaseUrl: deps.config.publicBaseUrl }),
    createWalletJobs(deps),
    createRegistryJobs({ config: deps.config, db: deps.db, logger: deps.logger, clock: deps.clock }),
    createWatchlistJobs(deps),
  ];
  const webhooks = createWebhooksModule(deps).jobs;
  modules.push(webhooks);
  return { modules, close: () => { mail.close(); void webhooks.close(); } };
}
