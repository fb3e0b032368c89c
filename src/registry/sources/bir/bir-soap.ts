import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * Wire format of GUS BIR1.1: SOAP 1.2 requests with WS-Addressing headers, MTOM/XOP multipart
 * responses, and a result element that carries the report as an entity-escaped XML string.
 */

export const BIR_NS = 'http://CIS/BIR/PUBL/2014/07';
export const BIR_DATA_NS = 'http://CIS/BIR/PUBL/2014/07/DataContract';
const GETVALUE_NS = 'http://CIS/BIR/2014/07';

export type BirMethod = 'Zaloguj' | 'Wyloguj' | 'DaneSzukajPodmioty' | 'DanePobierzPelnyRaport' | 'DanePobierzRaportZbiorczy' | 'GetValue';

export type SearchParameter = 'Regon' | 'Nip' | 'Krs' | 'Regony9zn' | 'Regony14zn' | 'Nipy' | 'Krsy';

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function soapAction(method: BirMethod): string {
  return method === 'GetValue' ? `${GETVALUE_NS}/IUslugaBIR/GetValue` : `${BIR_NS}/IUslugaBIRzewnPubl/${method}`;
}

/** The request envelope; `wsa:To` must equal the endpoint or the service answers "AddressFilter mismatch". */
export function buildEnvelope(
  endpoint: string,
  method: BirMethod,
  params: Record<string, string>,
  search?: { parameter: SearchParameter; value: string },
): string {
  const ns = method === 'GetValue' ? GETVALUE_NS : BIR_NS;
  let body = '';
  for (const [name, value] of Object.entries(params)) body += `<ns:${name}>${escapeXml(value)}</ns:${name}>`;
  if (search) {
    body += `<ns:pParametryWyszukiwania><dat:${search.parameter}>${escapeXml(search.value)}</dat:${search.parameter}></ns:pParametryWyszukiwania>`;
  }
  return (
    `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:ns="${ns}" xmlns:dat="${BIR_DATA_NS}">` +
    '<soap:Header xmlns:wsa="http://www.w3.org/2005/08/addressing">' +
    `<wsa:To>${escapeXml(endpoint)}</wsa:To><wsa:Action>${soapAction(method)}</wsa:Action>` +
    `</soap:Header><soap:Body><ns:${method}>${body}</ns:${method}></soap:Body></soap:Envelope>`
  );
}

function contentTypeParam(contentType: string, name: string): string | undefined {
  const re = new RegExp(`(?:^|;)\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]*))`, 'i');
  const m = re.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

/**
 * The SOAP envelope inside an MTOM/XOP answer: the part named by `start` (or the first part),
 * without its MIME headers. A plain soap+xml answer is returned unchanged.
 */
export function extractEnvelope(body: string, contentType: string | undefined): string {
  const type = contentType ?? '';
  if (!/^multipart\//i.test(type.trim())) return body;
  const boundary = contentTypeParam(type, 'boundary');
  if (!boundary) throw new Error('multipart answer without a boundary parameter');
  const start = contentTypeParam(type, 'start');
  const parts = body
    .split(`--${boundary}`)
    .slice(1)
    .filter((p) => !p.startsWith('--'));
  const parsed = parts.map((part) => {
    const text = part.replace(/^\r?\n/, '');
    const split = /\r?\n\r?\n/.exec(text);
    if (!split) return { headers: '', content: text };
    return { headers: text.slice(0, split.index), content: text.slice(split.index + split[0].length).replace(/\r?\n$/, '') };
  });
  const chosen = (start && parsed.find((p) => p.headers.toLowerCase().includes(`content-id: ${start.toLowerCase()}`))) || parsed[0];
  if (!chosen) throw new Error('multipart answer without parts');
  return chosen.content;
}

const envelopeParser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  // Kept raw: the inner document is decoded by hand so CDATA (official samples) stays verbatim.
  processEntities: false,
  trimValues: false,
  cdataPropName: '#cdata',
});

export interface SoapResult {
  /** Decoded result text; `''` for an empty result element (`<XResult/>`). */
  text: string;
  fault: string | null;
}

const ENTITY = /&(#x[0-9a-fA-F]+|#\d+|lt|gt|amp|quot|apos);/g;

/** One pass, so `&amp;lt;` becomes `&lt;` (a literal in the inner document), never `<`. */
export function decodeEntities(text: string): string {
  return text.replace(ENTITY, (_, e: string) => {
    switch (e) {
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'amp':
        return '&';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
      default:
        return String.fromCodePoint(e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10));
    }
  });
}

function textOf(node: unknown): string {
  if (node === undefined || node === null) return '';
  if (typeof node === 'string') return decodeEntities(node);
  if (typeof node === 'object') {
    const o = node as Record<string, unknown>;
    const cdata = o['#cdata'];
    const plain = typeof o['#text'] === 'string' ? decodeEntities(o['#text'] as string) : '';
    if (cdata !== undefined) return (Array.isArray(cdata) ? cdata.join('') : String(cdata)) + plain.trim();
    return plain;
  }
  return String(node);
}

/** Reads `<{method}Response><{method}Result>` from an envelope; throws on unreadable XML. */
export function readSoapResult(envelope: string, method: BirMethod): SoapResult {
  const valid = XMLValidator.validate(envelope);
  if (valid !== true) throw new Error(`the SOAP envelope is not well-formed XML (${valid.err.msg}, line ${valid.err.line})`);
  const doc = envelopeParser.parse(envelope) as Record<string, unknown>;
  const body = (doc.Envelope as Record<string, unknown> | undefined)?.Body as Record<string, unknown> | undefined;
  if (!body) throw new Error('the SOAP answer has no Body');
  if (body.Fault !== undefined) {
    const fault = body.Fault as Record<string, unknown>;
    const reason = (fault.Reason as Record<string, unknown> | undefined)?.Text ?? fault.faultstring ?? 'SOAP fault';
    return { text: '', fault: textOf(reason) };
  }
  // Matched by suffix: the BIR1 predecessor named the search `DaneSzukaj`, and recorded answers
  // of that generation must read the same way.
  const responseKey = `${method}Response` in body ? `${method}Response` : Object.keys(body).find((k) => k.endsWith('Response'));
  const response = responseKey ? body[responseKey] : undefined;
  if (response === undefined) throw new Error(`the SOAP answer has no ${method}Response`);
  const container = typeof response === 'object' && response !== null ? (response as Record<string, unknown>) : {};
  const resultKey = `${method}Result` in container ? `${method}Result` : Object.keys(container).find((k) => k.endsWith('Result'));
  const result = resultKey ? container[resultKey] : undefined;
  return { text: textOf(result), fault: null };
}

/** One `<dane>` row of a report, keyed by field name without report prefix, lower case. */
export type BirRow = Readonly<Record<string, string>>;

const rowParser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: true,
  isArray: (_name, jpath) => String(jpath) === 'root.dane',
});

// Report prefixes: `praw_regon9`, `fiz_nazwa`, `fizC_…` (CEIDG register data), `lokpraw_…`.
const FIELD_PREFIX = /^(praw|fiz|fizc|fizp|fizr|lokpraw|lokfiz|wspolsc)_/i;

/** `praw_adSiedzKraj_Symbol` → `adsiedzkrajsymbol`; spelling variants across BIR versions meet. */
export function fieldKey(name: string): string {
  return name.replace(FIELD_PREFIX, '').replace(/_/g, '').toLowerCase();
}

/** Parses the inner `<root><dane>…</dane>…</root>` document into rows. */
export function parseBirRows(innerXml: string): BirRow[] {
  const xml = innerXml.replace(/^\uFEFF/, '').trim();
  if (xml === '') return [];
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`the report is not well-formed XML (${valid.err.msg}, line ${valid.err.line})`);
  const doc = rowParser.parse(xml) as { root?: { dane?: unknown[] } | string };
  if (doc.root === undefined) throw new Error('the report has no <root> element');
  const rows = typeof doc.root === 'object' && doc.root !== null ? (doc.root.dane ?? []) : [];
  return rows.map((row) => {
    const out: Record<string, string> = {};
    if (typeof row === 'object' && row !== null) {
      for (const [name, value] of Object.entries(row as Record<string, unknown>)) {
        const text = typeof value === 'string' ? value : Array.isArray(value) ? String(value[0] ?? '') : '';
        const key = fieldKey(name);
        // `fiz_numerTelefonu` and an empty `fizC_numerTelefonu` share a key; keep the value.
        if (text !== '' || !(key in out)) out[key] = text;
      }
    }
    return out;
  });
}

/** The first non-empty field among spelling variants (BIR1, BIR1.1 and BIR1.2 differ). */
export function field(row: BirRow | undefined, ...names: string[]): string {
  if (!row) return '';
  for (const name of names) {
    const value = row[fieldKey(name)];
    if (value) return value.trim();
  }
  return '';
}
