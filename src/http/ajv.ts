import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(coerce: boolean) {
  // allErrors: the 422 body lists every problem at once, as the specification's
  // "(and N more errors)" message implies.
  const ajv = new (Ajv as unknown as typeof Ajv.default)({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    removeAdditional: true,
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
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/**
 * A validator of a JSON value outside a route (an MCP tool's arguments) under the body rules:
 * strict types, defaults filled in, unknown properties dropped, every error listed.
 */
export function compileJsonValidator(schema: object) {
  return bodyAjv.compile(schema);
}
