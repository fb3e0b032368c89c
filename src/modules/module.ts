import type { FastifyInstance } from 'fastify';
import type { JobModule } from '../jobs/queue.ts';

/**
 * What a domain module contributes to the process: its routes (registered under /api/v1 by
 * src/app.ts) and its background jobs (run by src/jobs/worker.ts). The composition root
 * (src/composition.ts) builds every module once; the HTTP app and the worker consume the same list.
 */
export interface AppModule {
  readonly name: string;
  readonly routes?: (api: FastifyInstance) => Promise<void>;
  readonly jobs?: JobModule;
  /** Called once the HTTP service is ready to serve (e.g. to build an in-memory index). */
  readonly startServing?: () => Promise<void>;
  /** Lets go of what the module holds (connection pools); called once by the composition's close. */
  readonly close?: () => Promise<void>;
}
