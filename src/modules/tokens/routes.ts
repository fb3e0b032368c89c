import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, NullableTimestampSchema, PathIdSchema, TimestampSchema } from '../../http/schemas.ts';
import { trimmedName } from '../../http/validation.ts';
import type { TokensService } from './service.ts';
import type { Clock } from '../../lib/clock.ts';

const TokenSchema = Type.Object({
  token_ref: Type.String(),
  name: Type.String(),
  kind: Type.Union([Type.Literal('master'), Type.Literal('api')]),
  expires_at: NullableTimestampSchema,
  is_active: Type.Boolean(),
  revoked_at: NullableTimestampSchema,
  last_used_at: NullableTimestampSchema,
  last_used_ip: Type.Union([Type.String(), Type.Null()]),
  usage_count: Type.Integer(),
  created_at: TimestampSchema,
});
const NewTokenSchema = Type.Object({
  token_ref: Type.String(),
  name: Type.String(),
  kind: Type.Union([Type.Literal('master'), Type.Literal('api')]),
  expires_at: NullableTimestampSchema,
  is_active: Type.Boolean(),
  created_at: TimestampSchema,
  plaintext: Type.String(),
  warning: Type.String(),
});
const NAME_MIN = 3;
const NameSchema = Type.String({ minLength: NAME_MIN, maxLength: 255 });
const RefParams = Type.Object({ token_ref: PathIdSchema() });
const Meta = Type.Object({ timestamp: TimestampSchema });

export function tokenRoutes(deps: { tokens: TokensService; clock: Clock }): FastifyPluginAsyncTypebox {
  const { tokens, clock } = deps;
  const meta = () => ({ timestamp: clock.now().toISOString() });
  return async (app) => {
    app.post(
      '/tokens',
      {
        config: { auth: 'master' },
        schema: {
          tags: ['Tokens'],
          summary: 'Create an API token',
          security: [{ bearer: [] }],
          description: 'The plaintext (`sk_api_…`) is returned once. Without `expires_in_days` (or with it null) the token never expires.',
          body: Type.Object(
            {
              name: NameSchema,
              // null reads as absent, as many clients send an optional field they have no value for.
              expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, nullable: true })),
            },
            { examples: [{ name: 'Production ETL', expires_in_days: 90 }] },
          ),
          response: {
            201: Type.Object({ success: Type.Boolean(), data: NewTokenSchema, meta: Meta }),
            ...errorResponses({ auth: 'master', validation: true }),
          },
        },
      },
      async (req, reply) => {
        const data = await tokens.create(req.auth!, trimmedName(req.body.name, 'name', NAME_MIN), req.body.expires_in_days ?? undefined);
        return reply.code(201).send({ success: true, data, meta: meta() });
      },
    );

    app.get(
      '/tokens',
      {
        config: { auth: 'master' },
        schema: {
          tags: ['Tokens'],
          summary: 'List the tokens of the account (Master Token included)',
          description:
            'Every token of the account, the Master Token included (`kind`: `master` or `api`), active, revoked or expired, without plaintexts; `meta.total` counts them.',
          security: [{ bearer: [] }],
          response: {
            200: Type.Object({
              success: Type.Boolean(),
              data: Type.Array(TokenSchema),
              meta: Type.Object({ total: Type.Integer(), timestamp: TimestampSchema }),
            }),
            ...errorResponses({ auth: 'master' }),
          },
        },
      },
      async (req) => {
        const data = await tokens.list(req.auth!.accountId);
        return { success: true, data, meta: { total: data.length, ...meta() } };
      },
    );

    app.post(
      '/tokens/verify',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Tokens'],
          summary: 'Verify the token in the Authorization header',
          description:
            'Master or API token: its reference, name, kind, owner and lifetime. A revoked, expired or unknown token is the 401 every route gives (`Token revoked`, `Token expired`, `Invalid API token`).',
          security: [{ bearer: [] }],
          response: {
            200: Type.Object({
              success: Type.Boolean(),
              data: Type.Object({
                valid: Type.Boolean(),
                token_ref: Type.String(),
                token_name: Type.String(),
                kind: Type.String(),
                user_ref: Type.String(),
                user_name: Type.String(),
                expires_at: NullableTimestampSchema,
                is_active: Type.Boolean(),
                last_used_at: NullableTimestampSchema,
              }),
              meta: Meta,
            }),
            ...errorResponses({ auth: 'any' }),
          },
        },
      },
      async (req) => {
        const a = req.auth!;
        return {
          success: true,
          data: {
            valid: true,
            token_ref: a.tokenRef,
            token_name: a.tokenName,
            kind: a.kind,
            user_ref: a.userRef,
            user_name: a.userName,
            expires_at: a.expiresAt?.toISOString() ?? null,
            is_active: true,
            last_used_at: a.lastUsedAt?.toISOString() ?? null,
          },
          meta: meta(),
        };
      },
    );

    app.get(
      '/tokens/:token_ref',
      {
        config: { auth: 'master' },
        schema: {
          tags: ['Tokens'],
          summary: 'Get one token',
          description: "One token's metadata (never its plaintext). An unknown reference, or another account's: 404 `Token not found`.",
          security: [{ bearer: [] }],
          params: RefParams,
          response: {
            200: Type.Object({ success: Type.Boolean(), data: TokenSchema, meta: Meta }),
            ...errorResponses({ auth: 'master', notFound: true }),
          },
        },
      },
      async (req) => ({ success: true, data: await tokens.get(req.auth!.accountId, req.params.token_ref), meta: meta() }),
    );

    app.put(
      '/tokens/:token_ref',
      {
        config: { auth: 'master' },
        schema: {
          tags: ['Tokens'],
          summary: 'Rename a token',
          description: 'A new name (3 to 255 characters, trimmed); the secret and the lifetime are unchanged.',
          security: [{ bearer: [] }],
          params: RefParams,
          body: Type.Object({ name: NameSchema }, { examples: [{ name: 'Nightly sync' }] }),
          response: {
            200: Type.Object({ success: Type.Boolean(), data: TokenSchema, meta: Meta }),
            ...errorResponses({ auth: 'master', notFound: true, validation: true }),
          },
        },
      },
      async (req) => ({
        success: true,
        data: await tokens.rename(req.auth!.accountId, req.params.token_ref, trimmedName(req.body.name, 'name', NAME_MIN)),
        meta: meta(),
      }),
    );

    app.delete(
      '/tokens/:token_ref',
      {
        config: { auth: 'master' },
        schema: {
          tags: ['Tokens'],
          summary: 'Revoke an API token (irreversible)',
          security: [{ bearer: [] }],
          params: RefParams,
          description:
            'The Master Token cannot be revoked (422): rotate it or recover the account. Revoking an already revoked token answers 200 with its original revoked_at.',
          response: {
            200: Type.Object({ success: Type.Boolean(), message: Type.String(), meta: Type.Object({ revoked_at: TimestampSchema }) }),
            ...errorResponses({ auth: 'master', notFound: true, validation: true }),
          },
        },
      },
      async (req) => {
        const r = await tokens.revoke(req.auth!, req.params.token_ref);
        return { success: true, message: `Token ${r.token_ref} has been revoked.`, meta: { revoked_at: r.revoked_at } };
      },
    );

    app.post(
      '/tokens/:token_ref/rotate',
      {
        config: { auth: 'master' },
        schema: {
          tags: ['Tokens'],
          summary: 'Rotate a token',
          security: [{ bearer: [] }],
          params: RefParams,
          description:
            'Revokes the token and creates a new one named `<name> (rotated)` with the same lifetime counted from now. The Master Token can be rotated too. Only an active token rotates: a revoked or expired one is 422 (`errors.token_ref`), and nothing changes.',
          response: {
            200: Type.Object({
              success: Type.Boolean(),
              data: Type.Object({
                old_token: Type.Object({
                  token_ref: Type.String(),
                  name: Type.String(),
                  revoked_at: TimestampSchema,
                  is_active: Type.Boolean(),
                }),
                new_token: NewTokenSchema,
              }),
              meta: Meta,
            }),
            ...errorResponses({ auth: 'master', notFound: true, validation: true }),
          },
        },
      },
      async (req) => ({ success: true, data: await tokens.rotate(req.auth!, req.params.token_ref), meta: meta() }),
    );
  };
}
