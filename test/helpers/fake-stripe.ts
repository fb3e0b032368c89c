import { after } from 'node:test';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

/** A Checkout Session as the Stripe API returns it (API version 2025-10-29.clover), trimmed of unused nulls. */
export interface FakeSession {
  id: string;
  object: 'checkout.session';
  amount_subtotal: number;
  amount_total: number;
  cancel_url: string | null;
  client_reference_id: string | null;
  created: number;
  currency: string;
  customer: string | null;
  customer_creation: 'if_required';
  customer_details: null | { email: string | null };
  customer_email: string | null;
  expires_at: number;
  livemode: false;
  locale: null;
  metadata: Record<string, string>;
  mode: 'payment';
  payment_intent: string | null;
  payment_method_types: string[];
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  status: 'open' | 'complete' | 'expired';
  success_url: string;
  ui_mode: 'hosted';
  url: string | null;
  automatic_tax: { enabled: false; liability: null; status: null };
}

/** A PaymentIntent as the Stripe API returns it, trimmed to what the service reads. */
export interface FakePaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  currency: string;
  status: 'processing' | 'succeeded' | 'requires_payment_method' | 'canceled';
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  form: Record<string, string>;
}

export interface FakeStripe {
  url: string;
  sessions: Map<string, FakeSession>;
  paymentIntents: Map<string, FakePaymentIntent>;
  requests: RecordedRequest[];
  /** Next requests answer 500 (Stripe down) while true. */
  failing: boolean;
  /** The payer paid: the session completes (paid, or unpaid for a delayed method). */
  complete(sessionId: string, paymentStatus?: 'paid' | 'unpaid'): FakeSession;
  /** A delayed payment of a complete, unpaid session failed: its PaymentIntent wants another method. */
  failDelayed(sessionId: string): FakePaymentIntent;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': id('req'),
    'stripe-version': '2025-10-29.clover',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const invalid = (message: string, param?: string) => ({ error: { type: 'invalid_request_error', message, ...(param ? { param } : {}) } });

/**
 * The few endpoints of the Stripe API the service calls, on 127.0.0.1: Checkout Sessions' create
 * (form-encoded, with idempotency keys honoured), retrieve and expire, and a PaymentIntent's
 * retrieve.
 */
export async function startFakeStripe(options: { secretKey?: string } = {}): Promise<FakeStripe> {
  const sessions = new Map<string, FakeSession>();
  const paymentIntents = new Map<string, FakePaymentIntent>();
  const byIdempotencyKey = new Map<string, string>();
  const requests: RecordedRequest[] = [];
  const state = { failing: false };

  // node:http does not await a handler; `void` below says so (a throw stays an unhandled rejection, failing the test).
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    const path = (req.url ?? '').split('?')[0];
    const form = Object.fromEntries(new URLSearchParams(body));
    requests.push({ method: req.method ?? '', path, headers: req.headers, form });
    if (state.failing) return send(res, 500, { error: { type: 'api_error', message: 'An unknown error occurred' } });
    if (options.secretKey && req.headers.authorization !== `Bearer ${options.secretKey}`) {
      return send(res, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    }

    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      const key = req.headers['idempotency-key'];
      if (typeof key === 'string' && byIdempotencyKey.has(key)) return send(res, 200, sessions.get(byIdempotencyKey.get(key)!));
      for (const required of ['success_url', 'mode', 'line_items[0][price_data][currency]', 'line_items[0][price_data][unit_amount]']) {
        if (!form[required]) return send(res, 400, invalid(`Missing required param: ${required}.`, required));
      }
      const amount = Number(form['line_items[0][price_data][unit_amount]']) * Number(form['line_items[0][quantity]'] ?? 1);
      const sid = id('cs_test');
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(form)) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1]] = v;
      }
      const session: FakeSession = {
        id: sid,
        object: 'checkout.session',
        amount_subtotal: amount,
        amount_total: amount,
        automatic_tax: { enabled: false, liability: null, status: null },
        cancel_url: form.cancel_url ?? null,
        client_reference_id: form.client_reference_id ?? null,
        created: Math.floor(Date.now() / 1000),
        currency: form['line_items[0][price_data][currency]'],
        customer: null,
        customer_creation: 'if_required',
        customer_details: null,
        customer_email: form.customer_email ?? null,
        expires_at: form.expires_at ? Number(form.expires_at) : Math.floor(Date.now() / 1000) + 86_400,
        livemode: false,
        locale: null,
        metadata,
        mode: 'payment',
        payment_intent: null,
        payment_method_types: ['card', 'blik', 'p24'],
        payment_status: 'unpaid',
        status: 'open',
        success_url: form.success_url,
        ui_mode: 'hosted',
        url: `https://checkout.stripe.com/c/pay/${sid}#fidkdWxOYHwnPyd1blpxYHZxWjA0`,
      };
      sessions.set(sid, session);
      if (typeof key === 'string') byIdempotencyKey.set(key, sid);
      return send(res, 200, session);
    }

    const m = /^\/v1\/checkout\/sessions\/([^/]+)(\/expire)?$/.exec(path);
    if (m) {
      const session = sessions.get(decodeURIComponent(m[1]));
      if (!session) return send(res, 404, invalid(`No such checkout.session: '${m[1]}'`, 'session'));
      if (req.method === 'GET' && !m[2]) return send(res, 200, session);
      if (req.method === 'POST' && m[2]) {
        if (session.status !== 'open')
          return send(
            res,
            400,
            invalid(
              `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`,
            ),
          );
        session.status = 'expired';
        session.url = null;
        return send(res, 200, session);
      }
    }
    const pi = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (pi && req.method === 'GET') {
      const intent = paymentIntents.get(decodeURIComponent(pi[1]));
      if (!intent) return send(res, 404, invalid(`No such payment_intent: '${pi[1]}'`, 'intent'));
      return send(res, 200, intent);
    }
    return send(res, 404, invalid(`Unrecognized request URL (${req.method}: ${path}).`));
  };
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const fake: FakeStripe = {
    url: `http://127.0.0.1:${port}`,
    sessions,
    paymentIntents,
    requests,
    get failing() {
      return state.failing;
    },
    set failing(v: boolean) {
      state.failing = v;
    },
    complete(sessionId, paymentStatus = 'paid') {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no fake session ${sessionId}`);
      s.status = 'complete';
      s.payment_status = paymentStatus;
      s.payment_intent = id('pi');
      paymentIntents.set(s.payment_intent, {
        id: s.payment_intent,
        object: 'payment_intent',
        amount: s.amount_total,
        currency: s.currency,
        status: paymentStatus === 'paid' ? 'succeeded' : 'processing',
      });
      s.customer_details = { email: s.customer_email };
      s.url = null;
      return s;
    },
    failDelayed(sessionId) {
      const intent = paymentIntents.get(sessions.get(sessionId)?.payment_intent ?? '');
      if (!intent) throw new Error(`no completed fake session ${sessionId}`);
      intent.status = 'requires_payment_method';
      return intent;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  after(() => fake.close());
  return fake;
}

/** A webhook Event wrapping a session, as Stripe delivers it. */
export function stripeEvent(type: string, object: unknown): string {
  return JSON.stringify({
    id: id('evt'),
    object: 'event',
    api_version: '2025-10-29.clover',
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
}

const signer = new Stripe('sk_test_signer');

/** The Stripe-Signature header for a payload, signed by the SDK (timestamp in seconds). */
export function signWebhook(payload: string, secret: string, timestamp?: number): string {
  return signer.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp !== undefined ? { timestamp } : {}) });
}
