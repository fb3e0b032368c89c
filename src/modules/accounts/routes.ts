import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, TimestampSchema } from '../../http/schemas.ts';
import { escapeHtml, page, wantsJson } from '../../http/html.ts';
import { trimmedName } from '../../http/validation.ts';
import type { AccountsService } from './service.ts';

const EmailSchema = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'Account e-mail; surrounding spaces are ignored, and it is stored in lower case.',
});

/** Surrounding white space around the e-mail (a pasted address) is not part of it: trimmed before its format is checked. */
function trimEmail(req: { body: unknown }, _reply: unknown, done: () => void): void {
  const body = req.body as { email?: unknown } | null | undefined;
  if (body && typeof body === 'object' && typeof body.email === 'string') body.email = body.email.trim();
  done();
}

const RecoveryFailedBody = (reason: string) => ({ message: 'Recovery confirmation failed', errors: { email: [reason] } });

/** The recovery token of a query or body that passed its schema; '' (a link that is not valid) otherwise. */
const tokenOf = (input: { token?: unknown } | undefined): string => (typeof input?.token === 'string' ? input.token : '');

export function accountRoutes(deps: { accounts: AccountsService }): FastifyPluginAsyncTypebox {
  const { accounts } = deps;
  return async (app) => {
    app.post(
      '/auth/register',
      {
        config: { auth: 'none' },
        preValidation: trimEmail,
        schema: {
          tags: ['Account'],
          summary: 'Register an account (passwordless)',
          description:
            'E-mails a one-time initialization token valid for 24 hours. Registering again before initialization mails a fresh token and the old one stops working.',
          body: Type.Object(
            { email: EmailSchema, name: Type.String({ minLength: 2, maxLength: 255 }) },
            { examples: [{ email: 'ania.kowalska@example.com', name: 'Ania Kowalska' }] },
          ),
          response: {
            201: Type.Object({ user_ref: Type.String(), email: Type.String(), message: Type.String(), expires_at: TimestampSchema }),
            ...errorResponses(),
            422: Type.Ref('ValidationError'),
          },
        },
      },
      async (req, reply) => {
        const result = await accounts.register(req.body.email.toLowerCase(), trimmedName(req.body.name, 'name', 2));
        return reply.code(201).send(result);
      },
    );

    app.post(
      '/auth/init',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['Account'],
          summary: 'Exchange the initialization token for the Master Token',
          description: 'Returns the Master Token once and credits the 100 welcome credits.',
          body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }),
          response: {
            200: Type.Object({
              user_ref: Type.String(),
              email: Type.String(),
              master_token: Type.String(),
              token_ref: Type.String(),
              message: Type.String(),
            }),
            ...errorResponses(),
            422: Type.Ref('ValidationError'),
          },
        },
      },
      async (req) => accounts.init(req.body.token.trim()),
    );

    app.post(
      '/auth/recover',
      {
        config: { auth: 'none' },
        preValidation: trimEmail,
        schema: {
          tags: ['Account'],
          summary: 'Request an account recovery link',
          description:
            'The answer is identical whether or not the account exists. The e-mailed link opens a confirmation page; confirming revokes every token and shows a new Master Token once.',
          body: Type.Object({ email: EmailSchema }, { examples: [{ email: 'ania.kowalska@example.com' }] }),
          response: {
            200: Type.Object({ message: Type.String(), expires_at: TimestampSchema }),
            ...errorResponses(),
            422: Type.Ref('ValidationError'),
          },
        },
      },
      async (req) => accounts.requestRecovery(req.body.email.toLowerCase()),
    );

    const TokenQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) });

    // The link's page and its form answer every malformed token (missing, repeated, not text, NUL)
    // as they answer an unknown one: "Recovery failed", on the page or as DECISIONS 1's 422. The
    // token is only ever hashed, so no text check stands in front of them.
    app.get(
      '/auth/recover/confirm',
      {
        config: { auth: 'none', guardQueryText: false },
        attachValidation: true,
        schema: {
          tags: ['Account'],
          summary: 'Recovery confirmation page (the e-mailed link)',
          description: 'An HTML page with one form and one button. With `Accept: application/json` a used or expired link answers 422.',
          querystring: TokenQuery,
          produces: ['text/html', 'application/json'],
          response: {
            200: Type.Union([Type.String(), Type.Object({ message: Type.String(), email: Type.String() })]),
            ...errorResponses(),
            422: Type.Ref('ValidationError'),
          },
        },
      },
      async (req, reply) => {
        const token = tokenOf(req.validationError ? undefined : req.query);
        const check = await accounts.checkRecoveryToken(token);
        reply.header('cache-control', 'no-store');
        if (wantsJson(req.headers.accept)) {
          if (!check.ok) return reply.code(422).send(RecoveryFailedBody(check.reason));
          return reply.send({
            message: 'Submit the confirmation (POST with the token) to receive a new Master Token.',
            email: check.email,
          });
        }
        if (!check.ok) {
          return reply
            .code(422)
            .type('text/html; charset=utf-8')
            .send(page('Recovery failed', `<h1>Recovery failed</h1><p class="error" role="alert">${escapeHtml(check.reason)}</p>`));
        }
        return reply.type('text/html; charset=utf-8').send(
          page(
            'Confirm account recovery',
            `
<h1>Confirm account recovery</h1>
<p>Account: <strong>${escapeHtml(check.email)}</strong></p>
<p class="warn">Confirming revokes <strong>every</strong> existing token of this account at once (the Master Token and all API tokens) and shows a new Master Token once.</p>
<form method="post" action="confirm">
  <input type="hidden" name="token" value="${escapeHtml(token)}">
  <button type="submit">Confirm recovery</button>
</form>`,
          ),
        );
      },
    );

    app.post(
      '/auth/recover/confirm',
      {
        config: { auth: 'none', guardBodyText: false, formBody: true },
        attachValidation: true,
        schema: {
          tags: ['Account'],
          summary: 'Confirm account recovery (the form submission)',
          description: 'Form-encoded or JSON `{token}`. Revokes every token of the account and returns a new Master Token once.',
          body: Type.Object({ token: Type.String({ maxLength: 200 }) }),
          consumes: ['application/x-www-form-urlencoded', 'application/json'],
          produces: ['text/html', 'application/json'],
          response: {
            200: Type.Union([
              Type.String(),
              Type.Object({
                user_ref: Type.String(),
                email: Type.String(),
                master_token: Type.String(),
                token_ref: Type.String(),
                message: Type.String(),
              }),
            ]),
            ...errorResponses(),
            422: Type.Ref('ValidationError'),
          },
        },
      },
      async (req, reply) => {
        const result = await accounts.confirmRecovery(tokenOf(req.validationError ? undefined : req.body));
        reply.header('cache-control', 'no-store');
        const json = wantsJson(req.headers.accept) || (req.headers['content-type'] ?? '').includes('application/json');
        if (!result.ok) {
          if (json) return reply.code(422).send(RecoveryFailedBody(result.reason));
          return reply
            .code(422)
            .type('text/html; charset=utf-8')
            .send(page('Recovery failed', `<h1>Recovery failed</h1><p class="error" role="alert">${escapeHtml(result.reason)}</p>`));
        }
        const message = 'Account recovered. Every previous token has been revoked. Store the new Master Token now: it is shown only once.';
        if (json)
          return reply.send({
            user_ref: result.user_ref,
            email: result.email,
            master_token: result.master_token,
            token_ref: result.token_ref,
            message,
          });
        return reply.type('text/html; charset=utf-8').send(
          page(
            'Account recovered',
            `
<h1>Account recovered</h1>
<p>${escapeHtml(message)}</p>
<p>New Master Token:</p>
<p class="token" id="master-token">${escapeHtml(result.master_token)}</p>
<p>Token reference: <code>${escapeHtml(result.token_ref)}</code></p>`,
          ),
        );
      },
    );
  };
}
