import type { FastifyInstance } from 'fastify';
import { NotFoundError, ValidationError } from '../lib/errors.ts';
import { routeNotFoundMessage } from './error-handler.ts';
import { fieldLabel } from './validation.ts';
import { unstorableTextFields } from '../lib/storable-text.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `false`: the route checks its body's text itself (the MCP endpoint checks a tool's
     * arguments, so that a bad one is a tool error like any other bad argument).
     */
    guardBodyText?: boolean;
    /**
     * `false`: the route checks its query's text itself (the recovery link's page, whose token is
     * only ever hashed: any malformed link is the page's own "not valid", not a 422 on a field).
     */
    guardQueryText?: boolean;
    /**
     * `false`: the route checks its path parameters itself (the statistics' date, whose malformed
     * value is a 422 on `date`, DECISIONS 6, rather than the unknown id's 404).
     */
    guardParamText?: boolean;
  }
}

/**
 * One guard in front of every route (docs/api-contract.md, "Text the service refuses"): before
 * schema validation, every string of the path parameters, query and body is checked, so no
 * route, present or future, can hand PostgreSQL text it fails on. A path parameter names no
 * resource then (404, as the route's unknown id would); a query or body field is a 422 on that
 * field. Runs after authentication (preParsing), so a 401 still comes first.
 */
export function installTextGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    // No route: the 404 (or 405) of the unknown route is the answer, whatever its query holds.
    if (request.is404) {
      done();
      return;
    }
    if (request.routeOptions.config?.guardParamText !== false && unstorableTextFields(request.params).length > 0) {
      done(new NotFoundError(routeNotFoundMessage(request.url)));
      return;
    }
    let errors: Record<string, string[]> | null = null;
    const body = request.routeOptions.config?.guardBodyText === false ? undefined : request.body;
    const query = request.routeOptions.config?.guardQueryText === false ? undefined : request.query;
    for (const [part, value] of [
      ['query', query],
      ['body', body],
    ] as const) {
      for (const path of unstorableTextFields(value)) {
        const field = path || part;
        (errors ??= {})[field] = [`The ${fieldLabel(field)} field must not contain NUL characters or unpaired surrogates.`];
      }
    }
    done(errors ? new ValidationError(errors) : undefined);
  });
}
