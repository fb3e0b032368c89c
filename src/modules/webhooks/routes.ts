import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/schemas.ts';
import { validationErrorsFromAjv } from '../../http/validation.ts';
import { ValidationError } from '../../lib/errors.ts';
import {
  CreateEndpointBody,
  CreatedEndpointSchema,
  DeliveriesQuery,
  DeliveryIdParams,
  DeliverySchema,
  EndpointIdParams,
  EndpointSchema,
  Envelope,
  PagedEnvelope,
  PageMetaSchema,
  ReplayBody,
  TestBody,
  UpdateEndpointBody,
} from './schema.ts';
import type { WebhooksService } from './service.ts';

/**
 * A body's validation errors, every problem at once (DECISIONS 7): when the schema refuses some
 * field, a `url` it let through is still checked (scheme, address), so a bad URL is not left
 * unsaid. An unknown event type is said on `event_types` itself (DECISIONS 8) besides its element
 * (`event_types.1`, as every list's element errors are keyed, DECISIONS 7); the message counts
 * every text of `errors`, as everywhere (summarizeErrors), so a client that counts them agrees.
 */
async function bodyError(webhooks: WebhooksService, err: Error, body: unknown): Promise<ValidationError> {
  const { validation, validationContext } = err as Error & { validation: never; validationContext?: string };
  const schemaErrors = validationErrorsFromAjv(validation, validationContext);
  const url = (body as { url?: unknown } | null | undefined)?.url;
  const problem = typeof url === 'string' && !schemaErrors.url ? await webhooks.urlProblem(url) : null;
  const errors = problem === null ? schemaErrors : { url: [problem], ...schemaErrors };
  if (errors.event_types) return new ValidationError(errors);
  // `event_types` goes where its first element's error stands, so the first error stays first.
  const all: Record<string, string[]> = {};
  for (const [key, texts] of Object.entries(errors)) {
    if (/^event_types\.\d+$/.test(key)) (all.event_types ??= []).push(...texts);
    all[key] = texts;
  }
  return new ValidationError(all);
}

const tags = ['Webhooks'];
const security = [{ bearer: [] }];
const accepted = Envelope(
  Type.Object({ message: Type.String() }, { examples: [{ message: 'The delivery is queued to be sent again now.' }] }),
);

/** The webhook routes (docs/webhooks.md): management needs the Master Token, reading any token. */
export function webhookRoutes(deps: { webhooks: WebhooksService }): FastifyPluginAsyncTypebox {
  const { webhooks } = deps;
  return async (app) => {
    app.post(
      '/webhooks',
      {
        config: { auth: 'master' },
        attachValidation: true,
        schema: {
          tags,
          security,
          summary: 'Create a webhook endpoint',
          description:
            'At most 10 endpoints an account. The `secret` (`whsec_…`) signs every message (Standard Webhooks) and is shown only here and at rotation. A URL that resolves to a loopback, private, link-local or otherwise non-public address is refused (422 on `url`).',
          body: CreateEndpointBody,
          response: { 201: Envelope(CreatedEndpointSchema), ...errorResponses({ auth: 'master', validation: true }) },
        },
      },
      async (req, reply) => {
        if (req.validationError) throw await bodyError(webhooks, req.validationError, req.body);
        return reply.code(201).send({ status: 'success' as const, data: await webhooks.create(req.auth!.accountId, req.body) });
      },
    );

    app.get(
      '/webhooks',
      {
        config: { auth: 'any' },
        schema: {
          tags,
          security,
          summary: 'List webhook endpoints',
          description: "The account's endpoints (at most 10), without their secrets.",
          response: { 200: Envelope(Type.Array(EndpointSchema)), ...errorResponses({ auth: 'any' }) },
        },
      },
      async (req) => ({ status: 'success' as const, data: await webhooks.list(req.auth!.accountId) }),
    );

    app.get(
      '/webhooks/:id',
      {
        config: { auth: 'any' },
        schema: {
          tags,
          security,
          summary: 'Get a webhook endpoint',
          description: "One endpoint, without its secret. Another account's, or an unknown id: 404.",
          params: EndpointIdParams,
          response: { 200: Envelope(EndpointSchema), ...errorResponses({ auth: 'any', notFound: true }) },
        },
      },
      async (req) => ({ status: 'success' as const, data: await webhooks.get(req.auth!.accountId, req.params.id) }),
    );

    app.patch(
      '/webhooks/:id',
      {
        config: { auth: 'master' },
        attachValidation: true,
        schema: {
          tags,
          security,
          summary: 'Update a webhook endpoint',
          description:
            'Enabling a disabled endpoint sends the messages held while it was disabled (those still within their retry schedule).',
          params: EndpointIdParams,
          body: UpdateEndpointBody,
          response: { 200: Envelope(EndpointSchema), ...errorResponses({ auth: 'master', validation: true, notFound: true }) },
        },
      },
      async (req) => {
        if (req.validationError) throw await bodyError(webhooks, req.validationError, req.body);
        return { status: 'success' as const, data: await webhooks.update(req.auth!.accountId, req.params.id, req.body) };
      },
    );

    app.delete(
      '/webhooks/:id',
      {
        config: { auth: 'master' },
        schema: {
          tags,
          security,
          summary: 'Delete a webhook endpoint',
          description: 'Nothing more is sent to it; its delivery log goes with it.',
          params: EndpointIdParams,
          response: {
            200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { examples: [{ id: 'ep_12', deleted: true }] })),
            ...errorResponses({ auth: 'master', notFound: true }),
          },
        },
      },
      async (req) => {
        await webhooks.remove(req.auth!.accountId, req.params.id);
        return { status: 'success' as const, data: { id: req.params.id, deleted: true as const } };
      },
    );

    app.post(
      '/webhooks/:id/rotate-secret',
      {
        config: { auth: 'master' },
        schema: {
          tags,
          security,
          summary: 'Rotate the signing secret',
          description:
            "For 24 hours every message carries two signatures in `webhook-signature`, by the new and the previous secret (space-separated); then only the new one. A second rotation within those 24 hours keeps the first one's overlap (three signatures until it ends).",
          params: EndpointIdParams,
          response: {
            200: Envelope(
              Type.Object(
                { secret: Type.String(), previous_secret_expires_at: Type.String({ format: 'date-time' }) },
                {
                  examples: [
                    {
                      secret: 'whsec_nmgIE4raI6RiC82uieyI+91xYslR3A/9eGjHeRo9hx0=',
                      previous_secret_expires_at: '2026-11-22T10:00:00.000Z',
                    },
                  ],
                },
              ),
            ),
            ...errorResponses({ auth: 'master', notFound: true }),
          },
        },
      },
      async (req) => ({ status: 'success' as const, data: await webhooks.rotateSecret(req.auth!.accountId, req.params.id) }),
    );

    app.post(
      '/webhooks/:id/test',
      {
        config: { auth: 'any' },
        schema: {
          tags,
          security,
          summary: 'Send a test message',
          description:
            'One message of the given type with sample values and `data.test: true`, through the ordinary delivery path (signed, retried, logged).',
          params: EndpointIdParams,
          body: TestBody,
          response: {
            202: Envelope(
              Type.Object(
                { message: Type.String(), message_id: Type.String() },
                { examples: [{ message: 'The test message is queued for delivery.', message_id: 'msg_3041' }] },
              ),
            ),
            ...errorResponses({ auth: 'any', validation: true, notFound: true }),
          },
        },
      },
      async (req, reply) => {
        const { message_id, held } = await webhooks.sendTest(req.auth!.accountId, req.params.id, req.body.event_type);
        const message = held
          ? 'The endpoint is disabled: the test message is held and goes out once the endpoint is enabled again.'
          : 'The test message is queued for delivery.';
        return reply.code(202).send({ status: 'success' as const, data: { message, message_id } });
      },
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        config: { auth: 'any' },
        schema: {
          tags,
          security,
          summary: "An endpoint's deliveries, newest first",
          description:
            "The endpoint's messages, newest first, each with its attempts, last answer and next attempt. `status` filters (`pending`, `delivered`, `failed`); `page` and `per_page` (1 to 100) paginate.",
          params: EndpointIdParams,
          querystring: DeliveriesQuery,
          response: {
            200: PagedEnvelope(Type.Array(DeliverySchema), PageMetaSchema),
            ...errorResponses({ auth: 'any', validation: true, notFound: true }),
          },
        },
      },
      async (req) => ({ status: 'success' as const, ...(await webhooks.listDeliveries(req.auth!.accountId, req.params.id, req.query)) }),
    );

    app.post(
      '/webhooks/:id/deliveries/:delivery_id/retry',
      {
        config: { auth: 'any' },
        schema: {
          tags,
          security,
          summary: 'Send one delivery again now',
          description:
            'With the same `webhook-id`; a failed message gets one more attempt. On a disabled endpoint the message is queued and goes out once the endpoint is enabled again (the answer says so).',
          params: DeliveryIdParams,
          response: { 202: accepted, ...errorResponses({ auth: 'any', notFound: true }) },
        },
      },
      async (req, reply) => {
        const { held } = await webhooks.retryDelivery(req.auth!.accountId, req.params.id, req.params.delivery_id);
        const message = held
          ? 'The endpoint is disabled: the delivery is queued and goes out once the endpoint is enabled again.'
          : 'The delivery is queued to be sent again now.';
        return reply.code(202).send({ status: 'success' as const, data: { message } });
      },
    );

    app.post(
      '/webhooks/:id/replay',
      {
        config: { auth: 'any' },
        schema: {
          tags,
          security,
          summary: 'Send the feed again from an event id',
          description:
            "Recovery after an outage: every event of the account's feed with an id greater than `after_id` (filtered by the endpoint's `event_types`) is sent again, each with its own message id.",
          params: EndpointIdParams,
          body: ReplayBody,
          response: {
            202: Envelope(Type.Object({ queued: Type.Integer() }, { examples: [{ queued: 42 }] })),
            ...errorResponses({ auth: 'any', validation: true, notFound: true }),
          },
        },
      },
      async (req, reply) =>
        reply
          .code(202)
          .send({ status: 'success' as const, data: await webhooks.replay(req.auth!.accountId, req.params.id, req.body.after_id) }),
    );
  };
}
