import { Type, type TSchema } from '@sinclair/typebox';

/** ISO 8601 timestamp with offset. */
export const TimestampSchema = Type.String({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });
export const NullableTimestampSchema = Type.Union([TimestampSchema, Type.Null()]);
export const DateSchema = Type.String({ format: 'date', maxLength: 10, examples: ['2026-11-21'] });

/**
 * A date filter in a query string: YYYY-MM-DD, or empty (`from_date=`, as a form leaves it), the
 * same as absent. The handler's parser checks the date and words the error (a format keyword here
 * would refuse the empty value with 422).
 */
export const QueryDateSchema = Type.String({ maxLength: 10, examples: ['2026-11-21'] });

/**
 * The longest path parameter the router hands on (Fastify's `maxParamLength`, set to this in
 * app.ts): a longer one is a 404 before validation (error-handler.ts, frameworkErrors). A path id
 * is bounded by it and by nothing shorter, so an id that names nothing is its resource's 404
 * (`Token not found`) whatever its length, never a 422.
 */
export const MAX_PATH_PARAM_LENGTH = 100;

/** A path id (token_ref, payment_ref, a webhook endpoint's or delivery's id). */
export const PathIdSchema = (options: { examples?: string[] } = {}) =>
  Type.String({ minLength: 1, maxLength: MAX_PATH_PARAM_LENGTH, ...options });

export const MessageSchema = Type.Object({ message: Type.String() }, { $id: 'Message' });
export const ValidationErrorSchema = Type.Object(
  { message: Type.String(), errors: Type.Record(Type.String(), Type.Array(Type.String())) },
  { $id: 'ValidationError' },
);
export const UnauthorizedSchema = Type.Object({ error: Type.String(), code: Type.Literal('UNAUTHORIZED') }, { $id: 'Unauthorized' });
export const ForbiddenSchema = Type.Object({ error: Type.String(), code: Type.Literal('FORBIDDEN') }, { $id: 'Forbidden' });
export const InsufficientCreditsSchema = Type.Object(
  { message: Type.String(), code: Type.Literal('INSUFFICIENT_CREDITS'), balance: Type.Integer(), required: Type.Integer() },
  { $id: 'InsufficientCredits' },
);

export const sharedSchemas = [MessageSchema, ValidationErrorSchema, UnauthorizedSchema, ForbiddenSchema, InsufficientCreditsSchema];

const ref = (s: TSchema) => Type.Ref(s.$id as string);

/**
 * What a route with a JSON body can answer before its input is validated (error-handler.ts;
 * docs/api-contract.md): a body that is not JSON or has a forbidden key (400), over the 1 MB
 * limit (413), or sent as another media type (415). installJsonBodyParser (request-parsing.ts)
 * adds them to every such route.
 */
export const bodyErrorResponses = (): Record<number, TSchema> => ({
  400: ref(MessageSchema),
  413: ref(MessageSchema),
  415: ref(MessageSchema),
});

/** The error responses every route documents, by what it can fail with. */
export function errorResponses(
  opts: { auth?: 'master' | 'any' | 'none'; validation?: boolean; notFound?: boolean; priced?: boolean } = {},
) {
  const r: Record<number, TSchema> = {
    429: ref(MessageSchema),
    500: ref(MessageSchema),
  };
  if (opts.auth && opts.auth !== 'none') r[401] = ref(UnauthorizedSchema);
  if (opts.auth === 'master') r[403] = ref(ForbiddenSchema);
  if (opts.validation) r[422] = ref(ValidationErrorSchema);
  if (opts.notFound) r[404] = ref(MessageSchema);
  if (opts.priced) r[402] = ref(InsufficientCreditsSchema);
  return r;
}
