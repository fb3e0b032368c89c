import { Type, type Static } from '@sinclair/typebox';
import { DateSchema, NullableTimestampSchema, TimestampSchema } from '../../http/schemas.ts';

/** Response schema of GET /api/v1/sources (docs/sources.md). */

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const SourceHealthSchema = Type.Union(
  [Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down'), Type.Literal('unconfigured')],
  {
    description:
      '`ok`; `degraded`: the last run failed or a day of the last 7 has no completed run; `down`: configured, and none of the last 3 due days completed; `unconfigured`: not in REGISTRY_SOURCES.',
  },
);

export const SourceRunSchema = Type.Object({
  date: Type.String({
    format: 'date',
    maxLength: 10,
    description: "The day the run is for (its events' `event_date`).",
    examples: ['2026-11-24'],
  }),
  status: Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  started_at: TimestampSchema,
  finished_at: NullableTimestampSchema,
  new: Count('Companies first seen.'),
  updated: Count('Companies with at least one event.'),
  deleted: Count('Companies that became deleted.'),
  events: Count('Events detected.'),
});

const sourceExample = {
  source: 'krs',
  configured: true,
  health: 'degraded',
  last_completed_date: '2026-11-24',
  last_run: {
    date: '2026-11-24',
    status: 'completed',
    started_at: '2026-11-25T03:00:04.120Z',
    finished_at: '2026-11-25T03:41:17.904Z',
    new: 112,
    updated: 2390,
    deleted: 41,
    events: 5122,
  },
  gaps: ['2026-11-20'],
  companies: 812345,
};

export const SourceStatusSchema = Type.Object(
  {
    source: Type.String({
      maxLength: 20,
      description: 'krs, bir, ceidg, vat; synthetic or file when configured or when they ran.',
      examples: ['krs'],
    }),
    configured: Type.Boolean({ description: 'Named in REGISTRY_SOURCES: the scheduler runs it every day.' }),
    health: SourceHealthSchema,
    last_completed_date: Type.Union([DateSchema, Type.Null()], { description: 'The latest day with a completed daily run.' }),
    last_run: Type.Union([SourceRunSchema, Type.Null()], {
      description: 'The most recent daily run: one running now, else the one that finished last.',
    }),
    gaps: Type.Array(DateSchema, {
      maxItems: 30,
      description: 'Due days of the last 30 without a completed run, oldest first (configured sources only).',
    }),
    companies: Count('Companies holding a profile from this source.'),
  },
  { examples: [sourceExample] },
);

export const SourcesResponseSchema = Type.Object(
  {
    status: Type.Literal('success'),
    data: Type.Array(SourceStatusSchema),
  },
  { examples: [{ status: 'success', data: [sourceExample] }] },
);

export type SourceStatus = Static<typeof SourceStatusSchema>;
