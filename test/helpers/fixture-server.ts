import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/**
 * A local HTTP server (127.0.0.1, port 0) that replays the registry payloads of the shared
 * fixtures, plus helpers to read fixtures and to wrap BIR inner XML the way the real service
 * sends it (MTOM/XOP multipart with the payload as an entity-escaped string).
 */

function resolveFixturesDir(): string {
  const override = process.env.REGWATCH_FIXTURES;
  if (override) return path.resolve(override);
  // The checkout has `shared/` beside the repository root: <root>/../shared/fixtures.
  const besideRepo = fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url));
  if (existsSync(besideRepo)) return besideRepo;
  throw new Error('Fixtures not found: expected ../shared/fixtures beside the repository or REGWATCH_FIXTURES');
}

export const FIXTURES_DIR = resolveFixturesDir();

export function fixturePath(relative: string): string {
  return path.join(FIXTURES_DIR, relative);
}

export function readFixture(relative: string): Buffer {
  return readFileSync(fixturePath(relative));
}

export function readFixtureText(relative: string): string {
  return readFixture(relative)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

export function readFixtureJson(relative: string): unknown {
  return JSON.parse(readFixtureText(relative));
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Wait this long before answering (for timeout tests). */
  delayMs?: number;
  /** Drop the connection without an answer. */
  destroy?: boolean;
}

export type Handler = (req: RecordedRequest) => Reply | Promise<Reply>;

export interface FixtureServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFixtureServer(handler: Handler): Promise<FixtureServer> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: decodeURIComponent(url.pathname),
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      Promise.resolve()
        .then(() => handler(recorded))
        .then((reply) => {
          const send = (): void => {
            timers.delete(timer);
            if (reply.destroy) {
              req.socket.destroy();
              return;
            }
            if (res.destroyed) return;
            res.writeHead(reply.status ?? 200, reply.headers ?? {});
            res.end(reply.body ?? '');
          };
          const timer = setTimeout(send, reply.delayMs ?? 0);
          timers.add(timer);
        })
        .catch((error: unknown) => {
          res.writeHead(599, { 'content-type': 'text/plain' });
          res.end(`fixture server handler failed: ${String(error)}`);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function jsonReply(body: unknown, status = 200): Reply {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** A fixture file served byte for byte with a JSON content type. */
export function jsonFixtureReply(relative: string, status = 200): Reply {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: readFixture(relative) };
}

export function problemReply(relative: string): Reply {
  return { status: 404, headers: { 'content-type': 'application/problem+json; charset=utf-8' }, body: readFixture(relative) };
}

// ---- BIR (GUS REGON SOAP) -------------------------------------------------------------------

function multipartContentType(boundary: string): string {
  return `multipart/related; type="application/xop+xml"; start="<http://tempuri.org/0>"; boundary="${boundary}"; start-info="application/soap+xml"`;
}

/** A recorded BIR response served raw, with the multipart/related type its boundary needs. */
export function birMultipartReply(relative: string): Reply {
  const body = readFixture(relative);
  const firstBoundary = /^--(\S+)\r?$/m.exec(body.toString('utf8'));
  if (!firstBoundary) throw new Error(`${relative}: no MIME boundary found`);
  return { status: 200, headers: { 'content-type': multipartContentType(firstBoundary[1]!) }, body };
}

function escapeAsBir(xml: string): string {
  // The service escapes the inner document as text and writes carriage returns as &#xD;.
  return xml
    .replace(/\r?\n/g, '\r\n')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\r/g, '&#xD;');
}

let boundaryCounter = 0;

/** Wraps an envelope body the way BIR does (one XOP part, CRLF line ends). */
export function birSoapReply(method: string, resultXml: string, namespace = 'http://CIS/BIR/PUBL/2014/07'): Reply {
  const boundary = `uuid:7f1c2a55-0000-4000-8000-00000000${String(++boundaryCounter).padStart(4, '0')}+id=${boundaryCounter}`;
  const action =
    namespace === 'http://CIS/BIR/2014/07'
      ? `http://CIS/BIR/2014/07/IUslugaBIR/${method}Response`
      : `${namespace}/IUslugaBIRzewnPubl/${method}Response`;
  const envelope =
    '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://www.w3.org/2005/08/addressing">' +
    `<s:Header><a:Action s:mustUnderstand="1">${action}</a:Action></s:Header>` +
    `<s:Body><${method}Response xmlns="${namespace}">${resultXml}</${method}Response></s:Body></s:Envelope>`;
  const body =
    `\r\n--${boundary}\r\nContent-ID: <http://tempuri.org/0>\r\nContent-Transfer-Encoding: 8bit\r\n` +
    `Content-Type: application/xop+xml;charset=utf-8;type="application/soap+xml"\r\n\r\n${envelope}\r\n--${boundary}--\r\n`;
  return { status: 200, headers: { 'content-type': multipartContentType(boundary) }, body: Buffer.from(body, 'utf8') };
}

/** A BIR answer whose result is the given inner XML document (e.g. a `*-inner.xml` fixture). */
export function birInnerReply(method: string, innerXml: string): Reply {
  return birSoapReply(method, `<${method}Result>${escapeAsBir(innerXml.replace(/^\uFEFF/, ''))}</${method}Result>`);
}

export function birInnerFixtureReply(method: string, relative: string): Reply {
  return birInnerReply(method, readFixtureText(relative));
}

/** An empty result element: what BIR answers when the session is missing or expired. */
export function birEmptyReply(method: string): Reply {
  return birSoapReply(method, `<${method}Result/>`);
}

export function birGetValueReply(value: string): Reply {
  return birSoapReply(
    'GetValue',
    value === '' ? '<GetValueResult/>' : `<GetValueResult>${value}</GetValueResult>`,
    'http://CIS/BIR/2014/07',
  );
}

/** A single-envelope SOAP document served as plain soap+xml (the official samples use CDATA). */
export function soapXmlReply(envelope: string): Reply {
  return { status: 200, headers: { 'content-type': 'application/soap+xml; charset=utf-8' }, body: envelope };
}

/**
 * The official error-message files hold several envelopes, each preceded by a comment naming
 * the case. Returns, per case, the envelope when it is complete (the last case of the
 * full-report file lacks its opening `<s:Envelope>` tag) and the inner document of its CDATA.
 */
export function splitOfficialEnvelopes(relative: string): Array<{ comment: string; envelope: string | null; inner: string }> {
  const text = readFixtureText(relative);
  const out: Array<{ comment: string; envelope: string | null; inner: string }> = [];
  let comment = '';
  for (const chunk of text.split(/(<!--[\s\S]*?-?->)/)) {
    if (chunk.startsWith('<!--')) {
      const label = chunk
        .replace(/^<!--|-?->$/g, '')
        .replace(/[=]+/g, '')
        .trim();
      if (label) comment = label;
      continue;
    }
    const inner = /<!\[CDATA\[([\s\S]*?)\]\]>/.exec(chunk)?.[1];
    if (!inner) continue;
    out.push({ comment, envelope: /<s:Envelope[\s\S]*<\/s:Envelope>/.exec(chunk)?.[0] ?? null, inner });
  }
  return out;
}

export interface SoapCall {
  action: string;
  method: string;
  params: Record<string, string>;
  sid: string | undefined;
}

/** Reads a BIR request the way the real service routes it: by wsa:Action and the body element. */
export function parseSoapCall(req: RecordedRequest): SoapCall {
  const action = /<(?:\w+:)?Action[^>]*>([^<]+)</.exec(req.body)?.[1] ?? '';
  const method = action.split('/').pop() ?? '';
  const params: Record<string, string> = {};
  for (const m of req.body.matchAll(/<(?:\w+:)?(p[A-Z]\w*|Regon|Nip|Krs|Regony9zn|Regony14zn|Nipy|Krsy)>([^<]+)</g)) params[m[1]!] = m[2]!;
  const sid = req.headers.sid;
  return { action, method, params, sid: Array.isArray(sid) ? sid[0] : sid };
}

/** Runs `fn` against a fixture server that is closed afterwards, whatever happens. */
export async function withServer<T>(handler: Handler, fn: (server: FixtureServer) => Promise<T>): Promise<T> {
  const server = await startFixtureServer(handler);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}
