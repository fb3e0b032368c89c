import type { Clock } from '../../../lib/clock.ts';
import { silentLog, type Log } from '../../../logger.ts';
import { systemClock } from '../../../lib/clock.ts';
import { MalformedPayloadError, SourceConfigError, SourceDateOutOfRangeError, SourceUnavailableError } from '../errors.ts';
import { backoffDelay, DEFAULT_RETRY_POLICY, headerValue, responseText, type HttpClient } from '../http.ts';
import { birErrorOf, BirServiceError } from './bir-reports.ts';
import {
  buildEnvelope,
  extractEnvelope,
  parseBirRows,
  readSoapResult,
  soapAction,
  type BirMethod,
  type BirRow,
  type SearchParameter,
} from './bir-soap.ts';

/**
 * A BIR1.1 session: `Zaloguj` once, the session id as the `sid` HTTP header on every call, and
 * a new login when the session lapses (60 minutes after login, the nightly 03:20 recycle, or an
 * IP change). GUS signals a lapsed session only by an empty result, so an empty result is
 * diagnosed through `GetValue` before anything is concluded from it.
 */

export interface BirClientOptions {
  /** The service endpoint, e.g. `https://wyszukiwarkaregon.stat.gov.pl/wsBIR/UslugaBIRzewnPubl.svc`. */
  endpoint: string;
  apiKey: string;
  http: HttpClient;
  clock?: Clock;
  logger?: Log;
  /** Log in again before GUS's 60-minute limit so calls never run into it. */
  sessionMaxAgeMs?: number;
  /** Waits between attempts when GUS reports too many concurrent summary reports (code 101). */
  busyRetries?: number;
  busyDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const SESSION_MAX_AGE_MS = 55 * 60_000;

export class BirClient {
  readonly #opts: BirClientOptions;
  readonly #clock: Clock;
  readonly #logger: Log;
  #sid: string | null = null;
  #loggedInAt = 0;
  #login: Promise<string> | null = null;

  constructor(options: BirClientOptions) {
    this.#opts = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLog;
  }

  get sessionId(): string | null {
    return this.#sid;
  }

  async #post(
    method: BirMethod,
    params: Record<string, string>,
    sid: string | null,
    signal: AbortSignal | undefined,
    search?: { parameter: SearchParameter; value: string },
  ): Promise<string> {
    const envelope = buildEnvelope(this.#opts.endpoint, method, params, search);
    const headers: Record<string, string> = {
      'content-type': `application/soap+xml; charset=utf-8; action="${soapAction(method)}"`,
      accept: 'multipart/related, application/soap+xml',
    };
    if (sid) headers.sid = sid;
    const response = await this.#opts.http.request({
      method: 'POST',
      url: this.#opts.endpoint,
      headers,
      body: envelope,
      signal,
      label: `BIR ${method}`,
    });
    if (response.status !== 200) {
      throw new SourceUnavailableError('bir', `bir ${method}: HTTP ${response.status}`, {
        reason: response.status === 401 || response.status === 403 ? 'auth' : 'http',
        status: response.status,
      });
    }
    let result;
    try {
      result = readSoapResult(extractEnvelope(responseText(response), headerValue(response, 'content-type')), method);
    } catch (error) {
      throw new MalformedPayloadError(
        'bir',
        `${method}${search ? ` ${search.parameter}=${search.value}` : params.pRegon ? ` ${params.pRegon}` : ''}`,
        (error as Error).message,
        { cause: error },
      );
    }
    if (result.fault !== null) throw new SourceUnavailableError('bir', `bir ${method}: SOAP fault: ${result.fault}`, { reason: 'service' });
    return result.text;
  }

  /** Logs in (once for concurrent callers) and returns the session id. */
  async login(signal?: AbortSignal): Promise<string> {
    this.#login ??= (async () => {
      try {
        const sid = (await this.#post('Zaloguj', { pKluczUzytkownika: this.#opts.apiKey }, null, signal)).trim();
        // An empty ZalogujResult is GUS's only answer to a wrong or revoked key.
        if (!sid) throw new SourceUnavailableError('bir', 'bir Zaloguj: the key was rejected (empty ZalogujResult)', { reason: 'auth' });
        this.#sid = sid;
        this.#loggedInAt = this.#clock.now().getTime();
        this.#logger.info({ source: 'bir' }, 'BIR session opened');
        return sid;
      } finally {
        this.#login = null;
      }
    })();
    return this.#login;
  }

  async #session(signal?: AbortSignal): Promise<string> {
    const age = this.#clock.now().getTime() - this.#loggedInAt;
    if (this.#sid && age < (this.#opts.sessionMaxAgeMs ?? SESSION_MAX_AGE_MS)) return this.#sid;
    return this.login(signal);
  }

  async getValue(
    name: 'StatusSesji' | 'KomunikatKod' | 'KomunikatTresc' | 'StatusUslugi' | 'KomunikatUslugi' | 'StanDanych',
    signal?: AbortSignal,
  ): Promise<string> {
    return (await this.#post('GetValue', { pNazwaParametru: name }, this.#sid, signal)).trim();
  }

  async #serviceDownError(context: string, signal?: AbortSignal): Promise<SourceUnavailableError> {
    const status = await this.getValue('StatusUslugi', signal);
    if (status !== '1') {
      const message = await this.getValue('KomunikatUslugi', signal).catch(() => '');
      return new SourceUnavailableError('bir', `bir ${context}: service status ${status || 'unknown'}${message ? ` (${message})` : ''}`, {
        reason: 'service',
      });
    }
    return new SourceUnavailableError('bir', `bir ${context}: empty results even with a new session`, { reason: 'service' });
  }

  /**
   * Calls a data method; an empty result is diagnosed: a lapsed session is renewed and the call
   * repeated once, GUS message code 4 means "nothing found" (returns ''), others are errors.
   */
  async #invoke(
    method: BirMethod,
    params: Record<string, string>,
    context: string,
    signal?: AbortSignal,
    search?: { parameter: SearchParameter; value: string },
  ): Promise<string> {
    for (let renewed = false; ; renewed = true) {
      const sid = await this.#session(signal);
      const text = await this.#post(method, params, sid, signal, search);
      if (text.trim() !== '') return text;
      const sessionStatus = await this.getValue('StatusSesji', signal);
      const code = sessionStatus === '1' ? await this.getValue('KomunikatKod', signal) : '';
      if (sessionStatus === '1' && code === '4') return '';
      if (sessionStatus === '1' && code !== '' && code !== '7') {
        const message = await this.getValue('KomunikatTresc', signal).catch(() => '');
        throw new BirServiceError(Number(code), { messagePl: message, context });
      }
      if (renewed) throw await this.#serviceDownError(context, signal);
      this.#logger.info({ source: 'bir', method }, 'BIR session lapsed, logging in again');
      this.#sid = null;
    }
  }

  #rows(text: string, context: string): BirRow[] {
    try {
      return parseBirRows(text);
    } catch (error) {
      throw new MalformedPayloadError('bir', context, (error as Error).message, { cause: error });
    }
  }

  /** `DaneSzukajPodmioty`; no match gives `[]`. */
  async search(parameter: SearchParameter, value: string, signal?: AbortSignal): Promise<BirRow[]> {
    const context = `search ${parameter}=${value}`;
    const rows = this.#rows(await this.#invoke('DaneSzukajPodmioty', {}, context, signal, { parameter, value }), context);
    const error = birErrorOf(rows, context);
    if (error?.code === 4) return [];
    if (error) throw error;
    return rows;
  }

  /** `DanePobierzPelnyRaport`; GUS error rows are thrown as `BirServiceError`. */
  async fullReport(regon: string, reportName: string, signal?: AbortSignal): Promise<BirRow[]> {
    const context = `${reportName} ${regon}`;
    const text = await this.#invoke('DanePobierzPelnyRaport', { pRegon: regon, pNazwaRaportu: reportName }, context, signal);
    if (text.trim() === '') throw new BirServiceError(4, { context });
    const rows = this.#rows(text, context);
    const error = birErrorOf(rows, context);
    if (error) throw error;
    return rows;
  }

  /**
   * `DanePobierzRaportZbiorczy` for one day. No data (weekends) gives `[]`; a day that is not
   * available yet or any more, and other failures, are thrown as run-level errors.
   */
  async summaryReport(date: string, reportName: string, signal?: AbortSignal): Promise<BirRow[]> {
    const context = `${reportName} ${date}`;
    const attempts = (this.#opts.busyRetries ?? 3) + 1;
    for (let attempt = 0; ; attempt++) {
      const text = await this.#invoke('DanePobierzRaportZbiorczy', { pDataRaportu: date, pNazwaRaportu: reportName }, context, signal);
      if (text.trim() === '') return [];
      const rows = this.#rows(text, context);
      const error = birErrorOf(rows, context);
      if (!error) return rows;
      switch (error.code) {
        case 4:
          return [];
        case 101:
          if (attempt + 1 >= attempts) throw new SourceUnavailableError('bir', error.message, { reason: 'rate_limited', cause: error });
          await (this.#opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(
            this.#opts.busyDelayMs ?? backoffDelay(attempt, { ...DEFAULT_RETRY_POLICY, backoffBaseMs: 5_000 }, Math.random),
          );
          continue;
        case 102:
        case 103:
          // The day is not published yet: the run can be repeated later.
          throw new SourceUnavailableError('bir', error.message, { reason: 'service', cause: error });
        case 104:
          throw new SourceDateOutOfRangeError('bir', date, error.message, { cause: error });
        case 105:
          throw new SourceConfigError('bir', error.message);
        default:
          throw error;
      }
    }
  }

  /** Ends the session (best effort: GUS drops it after 60 minutes anyway). */
  async logout(signal?: AbortSignal): Promise<void> {
    const sid = this.#sid;
    if (!sid) return;
    this.#sid = null;
    try {
      await this.#post('Wyloguj', { pIdentyfikatorSesji: sid }, sid, signal);
    } catch (error) {
      this.#logger.debug({ source: 'bir', error: (error as Error).message }, 'BIR logout failed');
    }
  }
}
