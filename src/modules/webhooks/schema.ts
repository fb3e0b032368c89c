import { Type, type TSchema } from '@sinclair/typebox';
import { NullableTimestampSchema, PathIdSchema, TimestampSchema } from '../../http/schemas.ts';
import { EVENT_TYPES } from '../../registry/model.ts';
import { MAX_URL_LENGTH } from './url-guard.ts';

/** Request and response schemas of the webhook routes (docs/webhooks.md). */

export const EventTypeSchema = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)));
const EventTypesSchema = Type.Array(EventTypeSchema, {
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types sent to this endpoint, kept in the order given (each at most once); empty or absent: all 29.',
});
const UrlSchema = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'http(s), at most 2,048 characters, resolving to a public address.',
});
// `nullable` (OpenAPI 3.0, and an ajv keyword) rather than a union with null, so that a value of
// another type is told "must be a string".
const DescriptionSchema = Type.String({ maxLength: 500, nullable: true, description: 'At most 500 characters; null clears it.' });
const StatusSchema = Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const EndpointIdParams = Type.Object({ id: PathIdSchema({ examples: ['ep_12'] }) });
export const DeliveryIdParams = Type.Object({
  ...EndpointIdParams.properties,
  delivery_id: PathIdSchema({ examples: ['msg_3041'] }),
});

const endpointExample = {
  id: 'ep_12',
  url: 'https://example.com/hooks/regwatch',
  description: 'CRM sync',
  event_types: ['COMPANY_BANKRUPTCY_STARTED', 'COMPANY_NAME_CHANGED'],
  status: 'enabled',
  disabled_reason: null,
  created_at: '2026-11-21T10:00:00.000Z',
  updated_at: '2026-11-21T10:00:00.000Z',
};

export const CreateEndpointBody = Type.Object(
  {
    url: UrlSchema,
    event_types: Type.Optional(EventTypesSchema),
    description: Type.Optional(DescriptionSchema),
  },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://example.com/hooks/regwatch',
        event_types: ['COMPANY_BANKRUPTCY_STARTED', 'COMPANY_NAME_CHANGED'],
        description: 'CRM sync',
      },
    ],
  },
);

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(UrlSchema),
    event_types: Type.Optional(EventTypesSchema),
    description: Type.Optional(DescriptionSchema),
    status: Type.Optional(StatusSchema),
  },
  { additionalProperties: false, examples: [{ status: 'enabled' }, { event_types: [] }] },
);

export const TestBody = Type.Object(
  { event_type: EventTypeSchema },
  { additionalProperties: false, examples: [{ event_type: 'COMPANY_NAME_CHANGED' }] },
);

export const ReplayBody = Type.Object(
  {
    after_id: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Every event of the feed with a greater id is sent again.',
    }),
  },
  { additionalProperties: false, examples: [{ after_id: 104233 }] },
);

export const DeliveriesQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')])),
});

export const EndpointSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    description: NullableString,
    event_types: Type.Array(EventTypeSchema),
    status: StatusSchema,
    disabled_reason: Type.Union([
      Type.String({ description: 'Why the service disabled it (410 Gone, 5 days of failures) or "by the account".' }),
      Type.Null(),
    ]),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  },
  { examples: [endpointExample] },
);

export const CreatedEndpointSchema = Type.Object(
  {
    ...EndpointSchema.properties,
    secret: Type.String({ description: 'whsec_ + base64 of 32 random bytes: shown here and at rotation only.' }),
  },
  { examples: [{ ...endpointExample, secret: 'whsec_oFScPtb7SuAkMWW9nWk27k9mIDn9qsUrQzxkasNv5X4=' }] },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'The message id: the webhook-id header, the same on every attempt.' }),
    event_id: Type.Union([Type.Integer(), Type.Null()], { description: 'Null for a test message.' }),
    event_type: EventTypeSchema,
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer(),
    last_attempt_at: NullableTimestampSchema,
    next_attempt_at: NullableTimestampSchema,
    last_response_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: NullableString,
    created_at: TimestampSchema,
    delivered_at: NullableTimestampSchema,
  },
  {
    examples: [
      {
        id: 'msg_3041',
        event_id: 104234,
        event_type: 'COMPANY_NAME_CHANGED',
        status: 'pending',
        attempts: 2,
        last_attempt_at: '2026-11-21T10:00:05.000Z',
        next_attempt_at: '2026-11-21T10:05:05.000Z',
        last_response_status: 500,
        last_error: 'HTTP 500',
        created_at: '2026-11-21T10:00:00.000Z',
        delivered_at: null,
      },
    ],
  },
);

export const PageMetaSchema = Type.Object({
  total: Type.Integer(),
  per_page: Type.Integer(),
  current_page: Type.Integer(),
  last_page: Type.Integer(),
});

export const Envelope = <T extends TSchema>(data: T) => Type.Object({ status: Type.Literal('success'), data });
export const PagedEnvelope = <T extends TSchema, M extends TSchema>(data: T, meta: M) =>
  Type.Object({ status: Type.Literal('success'), data, meta });
