import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AppModule } from '../module.ts';
import { createMailJobs } from './jobs.ts';

/** Sends what the outbox holds (src/modules/mail/outbox.ts); other modules only write to the outbox. */
export function createMailModule(deps: { db: Db; logger: Logger; clock: Clock; transport: Transporter | null; mailFrom: string }) {
  return { name: 'mail', jobs: createMailJobs(deps) } satisfies AppModule;
}
