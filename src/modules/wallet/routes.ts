import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, MessageSchema, NullableTimestampSchema, PathIdSchema, TimestampSchema } from '../../http/schemas.ts';
import type { WalletService } from './service.ts';

const Envelope = <T extends TSchema>(data: T) => Type.Object({ status: Type.Literal('success'), data });
const PagedEnvelope = <T extends TSchema, M extends TSchema>(data: T, meta: M) =>
  Type.Object({ status: Type.Literal('success'), data, meta });

const TypeSchema = Type.Union(['start', 'deposit', 'usage', 'refund'].map((t) => Type.Literal(t)));
const TwoDecimals = (description: string) => Type.String({ pattern: '^-?\\d+\\.\\d{2}$', description, examples: ['-1.00'] });

export const WalletSchema = Type.Object({
  balance: Type.Integer({ description: 'Current credits.' }),
  total_purchased: Type.Integer({ description: 'Credits purchased to date.' }),
});
export const WalletTransactionSchema = Type.Object({
  type: TypeSchema,
  amount: TwoDecimals('Credits, negative for usage.'),
  balance_after: TwoDecimals('Balance after the transaction.'),
  description: Type.String({
    description: 'What the transaction was for: the operation (e.g. `companies.search`), the top-up or the bonus.',
  }),
  created_at: Type.String({ description: 'UTC, with microseconds.', examples: ['2026-11-21T10:00:00.123456Z'] }),
});
export const PageMetaSchema = Type.Object({
  total: Type.Integer(),
  per_page: Type.Integer(),
  current_page: Type.Integer(),
  last_page: Type.Integer(),
  next_page: Type.Union([Type.Integer(), Type.Null()]),
  prev_page: Type.Union([Type.Integer(), Type.Null()]),
});
export const PackageSchema = Type.Object({
  slug: Type.String(),
  credits: Type.Integer(),
  price: Type.String({ description: 'Price as a decimal string in `currency`.', examples: ['49.00'] }),
  currency: Type.String({ examples: ['PLN'] }),
});
export const PaymentSchema = Type.Object({
  payment_ref: Type.String(),
  status: Type.Union(['pending', 'confirmed', 'failed', 'expired'].map((s) => Type.Literal(s))),
  package: Type.String(),
  credits: Type.Integer(),
  price: Type.String(),
  currency: Type.String(),
  provider: Type.String(),
  checkout_url: Type.Union([Type.String(), Type.Null()], { description: 'While pending: where to pay.' }),
  created_at: TimestampSchema,
  expires_at: TimestampSchema,
  completed_at: NullableTimestampSchema,
});
const PaymentRefParams = Type.Object({ payment_ref: PathIdSchema() });

export function walletRoutes(deps: { wallet: WalletService }): FastifyPluginAsyncTypebox {
  const { wallet } = deps;
  return async (app) => {
    app.get(
      '/wallet',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Wallet'],
          summary: 'Balance and credits purchased to date',
          description: 'The balance in credits and the credits bought to date. Free, with any token.',
          security: [{ bearer: [] }],
          response: { 200: Envelope(WalletSchema), ...errorResponses({ auth: 'any' }) },
        },
      },
      async (req) => ({ status: 'success' as const, data: await wallet.getWallet(req.auth!.accountId) }),
    );

    app.get(
      '/wallet/transactions',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Wallet'],
          summary: 'The ledger: every change of the balance, newest first',
          security: [{ bearer: [] }],
          description:
            'Types: `start` (welcome bonus), `deposit` (top-up), `usage` (negative; the description names the operation), `refund`.',
          querystring: Type.Object({
            page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
            per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          }),
          response: {
            200: PagedEnvelope(Type.Array(WalletTransactionSchema), PageMetaSchema),
            ...errorResponses({ auth: 'any', validation: true }),
          },
        },
      },
      async (req) => {
        const { data, meta } = await wallet.listTransactions(req.auth!.accountId, req.query.page, req.query.per_page);
        return { status: 'success' as const, data, meta };
      },
    );

    app.get(
      '/wallet/packages',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Wallet'],
          summary: 'Credit packages that can be bought, with prices',
          description: 'The packages `POST /wallet/topup` takes as `package_slug`, with their credits and price. Free.',
          security: [{ bearer: [] }],
          response: { 200: Envelope(Type.Array(PackageSchema)), ...errorResponses({ auth: 'any' }) },
        },
      },
      async () => ({ status: 'success' as const, data: wallet.listPackages() }),
    );

    app.post(
      '/wallet/topup',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Wallet'],
          summary: 'Start buying a credit package',
          security: [{ bearer: [] }],
          description:
            'Opens a checkout and returns its URL, to open in a browser. The wallet is credited once the payment is confirmed; `GET /wallet/payments/{payment_ref}` follows it.',
          body: Type.Object(
            { package_slug: Type.String({ minLength: 1, maxLength: 64, examples: ['credits-1000'] }) },
            { examples: [{ package_slug: 'credits-1000' }] },
          ),
          response: {
            200: Envelope(
              Type.Object({
                checkout_url: Type.String({ description: 'Open in a browser to pay.' }),
                package: Type.String(),
                credits: Type.Integer(),
                payment_ref: Type.String(),
                status: Type.Literal('pending'),
                price: Type.String(),
                currency: Type.String(),
                expires_at: TimestampSchema,
              }),
            ),
            502: Type.Ref(MessageSchema.$id as string),
            ...errorResponses({ auth: 'any', validation: true }),
          },
        },
      },
      async (req) => {
        const data = await wallet.topup({ accountId: req.auth!.accountId, email: req.auth!.email }, req.body.package_slug);
        return { status: 'success' as const, data: { ...data, status: 'pending' as const } };
      },
    );

    app.get(
      '/wallet/payments/:payment_ref',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Wallet'],
          summary: 'One top-up payment and its state',
          security: [{ bearer: [] }],
          params: PaymentRefParams,
          description: 'States: `pending`, then `confirmed` (credited once), `failed` or `expired`.',
          response: { 200: Envelope(PaymentSchema), ...errorResponses({ auth: 'any', notFound: true, validation: true }) },
        },
      },
      async (req) => ({ status: 'success' as const, data: await wallet.getPayment(req.auth!.accountId, req.params.payment_ref) }),
    );
  };
}
