import { type Api, type CallOptions, eachItem, unwrap, withPage } from './core.ts';
import type { BodyOf, ResultOf, WalletTransaction } from './types.ts';

/** Registration and the Master Token (no token needed). */
export class Auth {
  constructor(private readonly api: Api) {}

  /** Register an account; the initialization token is mailed to `email`. */
  register(body: BodyOf<'/api/v1/auth/register', 'post'>, options: CallOptions = {}): Promise<ResultOf<'/api/v1/auth/register', 'post'>> {
    return unwrap(this.api.POST('/api/v1/auth/register', { body, signal: options.signal }));
  }

  /** Exchange the mailed initialization token for the Master Token (shown once). */
  init(token: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/auth/init', 'post'>> {
    return unwrap(this.api.POST('/api/v1/auth/init', { body: { token }, signal: options.signal }));
  }

  /** Mail a recovery link (a new Master Token) to the account's address. */
  recover(email: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/auth/recover', 'post'>> {
    return unwrap(this.api.POST('/api/v1/auth/recover', { body: { email }, signal: options.signal }));
  }
}

/** Tokens of the account: API tokens are made, renamed, rotated and revoked with the Master Token. */
export class Tokens {
  constructor(private readonly api: Api) {}

  /** A new API token; `data.plaintext` is shown this once. */
  create(body: BodyOf<'/api/v1/tokens', 'post'>, options: CallOptions = {}): Promise<ResultOf<'/api/v1/tokens', 'post'>> {
    return unwrap(this.api.POST('/api/v1/tokens', { body, signal: options.signal }));
  }

  list(options: CallOptions = {}): Promise<ResultOf<'/api/v1/tokens', 'get'>> {
    return unwrap(this.api.GET('/api/v1/tokens', { signal: options.signal }));
  }

  get(tokenRef: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/tokens/{token_ref}', 'get'>> {
    return unwrap(this.api.GET('/api/v1/tokens/{token_ref}', { params: { path: { token_ref: tokenRef } }, signal: options.signal }));
  }

  rename(tokenRef: string, name: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/tokens/{token_ref}', 'put'>> {
    return unwrap(
      this.api.PUT('/api/v1/tokens/{token_ref}', { params: { path: { token_ref: tokenRef } }, body: { name }, signal: options.signal }),
    );
  }

  /** Revoke an API token (irreversible). */
  revoke(tokenRef: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/tokens/{token_ref}', 'delete'>> {
    return unwrap(this.api.DELETE('/api/v1/tokens/{token_ref}', { params: { path: { token_ref: tokenRef } }, signal: options.signal }));
  }

  /** Replace a token by a new one (the old stops working). */
  rotate(tokenRef: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/tokens/{token_ref}/rotate', 'post'>> {
    return unwrap(
      this.api.POST('/api/v1/tokens/{token_ref}/rotate', { params: { path: { token_ref: tokenRef } }, signal: options.signal }),
    );
  }

  /** Who the client's own token belongs to, and whether it is valid. */
  verify(options: CallOptions = {}): Promise<ResultOf<'/api/v1/tokens/verify', 'post'>> {
    return unwrap(this.api.POST('/api/v1/tokens/verify', { signal: options.signal }));
  }
}

/** Credits: the balance, the ledger, buying a package. */
export class Wallet {
  constructor(private readonly api: Api) {}

  get(options: CallOptions = {}): Promise<ResultOf<'/api/v1/wallet', 'get'>> {
    return unwrap(this.api.GET('/api/v1/wallet', { signal: options.signal }));
  }

  /** One page of the ledger, newest first. */
  transactions(
    query: { page?: number; per_page?: number } = {},
    options: CallOptions = {},
  ): Promise<ResultOf<'/api/v1/wallet/transactions', 'get'>> {
    return unwrap(this.api.GET('/api/v1/wallet/transactions', { params: { query: withPage(query) }, signal: options.signal }));
  }

  transactionsAll(query: { per_page?: number } = {}, options: CallOptions = {}): AsyncGenerator<WalletTransaction, void, undefined> {
    return eachItem(async (page) => {
      const { data, meta } = await this.transactions({ ...query, page }, options);
      return { items: data, lastPage: meta.last_page };
    });
  }

  packages(options: CallOptions = {}): Promise<ResultOf<'/api/v1/wallet/packages', 'get'>> {
    return unwrap(this.api.GET('/api/v1/wallet/packages', { signal: options.signal }));
  }

  /** Start buying a package: open `data.checkout_url` in a browser, then follow `payment(payment_ref)`. */
  topup(packageSlug: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/wallet/topup', 'post'>> {
    return unwrap(this.api.POST('/api/v1/wallet/topup', { body: { package_slug: packageSlug }, signal: options.signal }));
  }

  payment(paymentRef: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/wallet/payments/{payment_ref}', 'get'>> {
    return unwrap(
      this.api.GET('/api/v1/wallet/payments/{payment_ref}', { params: { path: { payment_ref: paymentRef } }, signal: options.signal }),
    );
  }
}
