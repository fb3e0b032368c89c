import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import type { AppModule } from '../modules/module.ts';
import { createRegistryJobs } from './jobs.ts';
import type { RegistrySourcesDeps } from './sources/index.ts';
import type { RegistryExecutor } from './store.ts';

/** The registry's background work: the scheduled daily run of every configured source (docs/registry.md). */
export function createRegistryModule(deps: {
  config: Config;
  db: RegistryExecutor;
  logger: Logger;
  clock: Clock;
  sourceDeps?: RegistrySourcesDeps;
}) {
  return { name: 'registry', jobs: createRegistryJobs(deps) } satisfies AppModule;
}
