import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** A job whose payload does not fit its task's schema: a bug in whoever queued it, never retried into success. */
export class InvalidJobPayloadError extends Error {
  constructor(task: string, detail: string) {
    super(`${task}: invalid payload: ${detail}`);
    this.name = 'InvalidJobPayloadError';
  }
}

/** Checks a job's payload against its task's TypeBox schema and returns it typed. */
export function parseJobPayload<T extends TSchema>(task: string, schema: T, payload: unknown): Static<T> {
  if (Value.Check(schema, payload)) return payload;
  const first = Value.Errors(schema, payload).First();
  // `/request_id` reads as `payload.request_id` in the job's error, as a field path should.
  throw new InvalidJobPayloadError(
    task,
    first ? `payload${first.path.replaceAll('/', '.')}: ${first.message}` : 'payload does not match its schema',
  );
}
