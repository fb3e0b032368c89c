import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { compose } from '../src/composition.ts';
import { JOB_MODULES } from '../src/config.ts';
import { createManualClock, testConfig } from './helpers/app.ts';

/** The task names and crontab lines a worker process composed with this environment would run. */
async function workerJobsOf(env: Record<string, string>) {
  const parts = compose({
    config: testConfig({ REGISTRY_SOURCES: 'synthetic', ...env }),
    db: undefined as never,
    logger: pino({ level: 'silent' }),
    clock: createManualClock('2026-01-01T00:00:00Z'),
  });
  try {
    return {
      tasks: parts.jobs.flatMap((m) => Object.keys(m.tasks)).sort(),
      crontab: parts.jobs.flatMap((m) => m.crontab ?? []).map((line) => line.split(' ')[5]!),
      modulesWithJobs: parts.list.filter((m) => m.jobs).map((m) => m.name),
    };
  } finally {
    await parts.close();
  }
}

test('WORKER_JOBS: the composition hands the worker only the selected modules tasks and crontab', async () => {
  const all = await workerJobsOf({});
  assert.deepEqual([...all.modulesWithJobs].sort(), [...JOB_MODULES].sort(), 'JOB_MODULES lists exactly the modules with jobs');
  assert.ok(all.tasks.includes('registry.daily') && all.tasks.includes('webhooks.deliver'), all.tasks.join());

  const webhooks = await workerJobsOf({ ROLE: 'worker', WORKER_JOBS: 'webhooks' });
  assert.deepEqual(webhooks.tasks, ['webhooks.deliver', 'webhooks.fanout', 'webhooks:sweep']);
  assert.deepEqual(webhooks.crontab, ['webhooks:sweep']);

  const others = await workerJobsOf({ ROLE: 'worker', WORKER_JOBS: '-webhooks' });
  assert.deepEqual(
    others.tasks,
    all.tasks.filter((t) => !webhooks.tasks.includes(t)),
  );
  assert.deepEqual(others.crontab.sort(), ['registry:daily-tick', 'wallet:expire-payments']);
});
