import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(coerce: boolean) {
  // allErrors: the 422 body lists every problem at once, as the specification's
  // "(and N more errors)" message implies. A schema with `additionalProperties: false` (the
  // webhook bodies) refuses an unknown field (422 on it) rather than dropping it: a misspelt
  // `event_types` must not subscribe an endpoint to every type. Other bodies ignore unknown fields.
  const ajv = new (Ajv as unknown as typeof Ajv.default)({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
  });
  (addFormats as unknown as typeof addFormats.default)(ajv, ['date', 'email', 'date-time', 'uri']);
  return ajv;
}

const bodyAjv = makeAjv(false);
const partsAjv = makeAjv(true);

/**
 * JSON bodies are validated strictly (`{"name": 123}` is an error, not "123"); query strings,
 * path parameters and headers arrive as text, so they are coerced to their declared types.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : partsAjv;
  const validate = ajv.compile(schema as object);
  return (httpPart === 'querystring' ? decimalNumbersOnly(schema as object, validate) : validate) as ReturnType<
    FastifySchemaCompiler<unknown>
  >;
};

const INTEGER_TEXT = /^-?[0-9]+$/;
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * Query parameters declared as numbers must be written in decimal digits. ajv's coercion takes
 * whatever JavaScript's `+value` does, so `page=0x10` was page 16, `page=1e2` page 100 and
 * `after_id=%201440` 1440. A value of another form is handed to ajv as something it cannot
 * coerce, so it is the same 422 as `page=abc` (`The page field must be an integer.`), listed with
 * the query's other errors.
 */
function decimalNumbersOnly(schema: object, validate: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const numeric: [string, RegExp][] = [];
  for (const [name, p] of Object.entries(properties)) {
    if (p.type === 'integer') numeric.push([name, INTEGER_TEXT]);
    else if (p.type === 'number') numeric.push([name, NUMBER_TEXT]);
  }
  if (numeric.length === 0) return validate;
  const checked = ((data: unknown) => {
    if (data !== null && typeof data === 'object') {
      const query = data as Record<string, unknown>;
      for (const [name, form] of numeric) {
        const value = query[name];
        if (typeof value === 'string' && !form.test(value)) query[name] = NOT_A_NUMBER;
      }
    }
    return validate(data);
  }) as ValidateFunction;
  // ajv leaves its errors on the function it compiled; Fastify reads them from the one it is given.
  Object.defineProperty(checked, 'errors', { get: () => validate.errors });
  return checked;
}

/** What a non-decimal number becomes: a value ajv's coercion leaves alone, so its type check fails. */
const NOT_A_NUMBER = Object.freeze({});

/**
 * A validator of a JSON value outside a route (an MCP tool's arguments) under the body rules:
 * strict types, defaults filled in, every error listed.
 */
export function compileJsonValidator(schema: object) {
  return bodyAjv.compile(schema);
}
