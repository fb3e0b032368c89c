import type { Db } from '../../db/database.ts';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { severityOf } from '../../registry/diff.ts';
import { EVENT_TYPES, type EventType } from '../../registry/model.ts';
import { queueDispatch } from './dispatcher.ts';
import { notifyEndpointChanged } from './endpoint-changes.ts';
import {
  countEndpoints,
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  insertTestMessage,
  listDeliveries,
  listEndpoints,
  lockAccountEndpoints,
  requeueDelivery,
  requeueFeedAfter,
  rotateSecret,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
} from './repo.ts';
import { generateSecret } from './signing.ts';
import type { DeliveryStatus, EndpointStatus } from './tables.ts';
import { checkWebhookUrl, type ResolveHost } from './url-guard.ts';

export const MAX_ENDPOINTS = 10;
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  event_types: EventType[];
  status: EndpointStatus;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  event_id: number | null;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface EndpointInput {
  url?: string;
  event_types?: string[];
  description?: string | null;
  status?: EndpointStatus;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const ENDPOINT_ID = /^ep_([1-9]\d{0,17})$/;
const DELIVERY_ID = /^msg_([1-9]\d{0,17})$/;

function viewEndpoint(r: EndpointRow): EndpointView {
  return {
    id: `ep_${r.id}`,
    url: r.url,
    description: r.description,
    event_types: r.event_types,
    status: r.status,
    disabled_reason: r.disabled_reason,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

function viewDelivery(r: DeliveryRow): DeliveryView {
  return {
    id: `msg_${r.id}`,
    event_id: r.event_id,
    event_type: r.event_type,
    status: r.status,
    attempts: r.attempts,
    last_attempt_at: iso(r.last_attempt_at),
    next_attempt_at: iso(r.next_attempt_at),
    last_response_status: r.last_response_status,
    last_error: r.last_error,
    created_at: r.created_at.toISOString(),
    delivered_at: iso(r.delivered_at),
  };
}

function checkEventTypes(types: readonly string[] | undefined, errors: Record<string, string[]>): EventType[] | undefined {
  if (types === undefined) return undefined;
  types.forEach((t, i) => {
    if (!(EVENT_TYPES as readonly string[]).includes(t))
      (errors[`event_types.${i}`] ??= []).push(`The selected event_types.${i} is invalid.`);
  });
  // Kept in the order sent (the schema refuses a repeated type).
  return [...types] as EventType[];
}

/**
 * Sample `[old_value, new_value]` of each type, in the formats real events use
 * (docs/api-contract.md, "Values"; src/registry/diff.ts), so that a receiver's parser meets in a
 * test message what it will meet in the feed. `DATE` stands for the message's date.
 */
const DATE = '<date>';
const SAMPLE_VALUES: Record<EventType, readonly [string | null, string | null]> = {
  COMPANY_NAME_CHANGED: [
    'PRZYKŁADOWA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    'PRZYKŁADOWA GRUPA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
  ],
  COMPANY_LEGAL_FORM_CHANGED: ['SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'SPÓŁKA AKCYJNA'],
  COMPANY_TAX_IDENTITY_CHANGED: ['5261040834', '5261040828'],
  COMPANY_REGISTERED_ADDRESS_ADDED: [null, 'ul. Marszałkowska 1/2, 00-950 Warszawa'],
  COMPANY_REGISTERED_ADDRESS_CHANGED: ['ul. Marszałkowska 1/2, 00-950 Warszawa', 'ul. Długa 10, 31-147 Kraków'],
  COMPANY_ACTIVITIES_ADDED: [null, '6202Z, 6311Z'],
  COMPANY_ACTIVITIES_REMOVED: ['4791Z', null],
  COMPANY_ACTIVITIES_CHANGED: [
    '6201Z Działalność związana z oprogramowaniem',
    '6201Z Działalność związana z oprogramowaniem i doradztwem w zakresie informatyki',
  ],
  COMPANY_MAIN_ACTIVITY_CHANGED: ['4791Z', '6201Z'],
  COMPANY_SUSPENDED_DATE: [null, DATE],
  COMPANY_RESUMPTION_DATE: [null, DATE],
  COMPANY_CLOSED_DATE: [null, DATE],
  COMPANY_START_DATE_CHANGE: ['2015-03-01', DATE],
  COMPANY_STATUS_CHANGED: ['aktywny', 'zawieszony'],
  COMPANY_BANKRUPTCY_STARTED: [null, DATE],
  COMPANY_BANKRUPTCY_ENDED: [null, DATE],
  COMPANY_LIQUIDATION_STARTED: [null, DATE],
  COMPANY_LIQUIDATION_ENDED: [null, DATE],
  COMPANY_RESTRUCTURING_STARTED: [null, DATE],
  COMPANY_RESTRUCTURING_ENDED: [null, DATE],
  COMPANY_EMAIL_CHANGED: ['biuro@przyklad.pl', 'biuro@przyklad.pl, kontakt@przyklad.pl'],
  COMPANY_PHONE_CHANGED: ['+48 22 000 00 00', '+48 22 111 11 11'],
  COMPANY_WEBSITE_CHANGED: ['https://www.przyklad.pl', 'https://przyklad.pl'],
  COMPANY_UNIT_OPENED: [null, '14600000000011 ODDZIAŁ KRAKÓW'],
  COMPANY_UNIT_CLOSED: ['14600000000011 ODDZIAŁ KRAKÓW', null],
  COMPANY_PERSON_ADDED: [null, 'Jan Kowalski (PREZES ZARZĄDU)'],
  COMPANY_PERSON_REMOVED: ['Anna Nowak (PROKURENT)', null],
  COMPANY_VAT_STATUS_CHANGED: ['Czynny', 'Zwolniony'],
  COMPANY_BANK_ACCOUNTS_CHANGED: ['61109010140000071219812874', '27114020040000300201355387, 61109010140000071219812874'],
};

/** The data of a test message: sample values of the type (SAMPLE_VALUES), marked `test: true`. */
export function sampleEventData(type: EventType, at: Date): Record<string, unknown> {
  const day = at.toISOString().slice(0, 10);
  const [oldValue, newValue] = SAMPLE_VALUES[type].map((v) => (v === DATE ? day : v));
  return {
    id: 0,
    event_type: type,
    old_value: oldValue,
    new_value: newValue,
    event_date: day,
    severity: severityOf(type, newValue ?? null),
    primary_identifier: '5261040828',
    identifier_type: 'NIP',
    // The company's name as the feed gives it, its current one: after a name change, the new name.
    company_name: type === 'COMPANY_NAME_CHANGED' ? newValue : SAMPLE_VALUES.COMPANY_NAME_CHANGED[0],
    test: true,
  };
}

export interface WebhooksServiceDeps {
  db: Db;
  clock: Clock;
  allowPrivateUrls: boolean;
  resolve: ResolveHost;
}

export function createWebhooksService(deps: WebhooksServiceDeps) {
  const { db, clock } = deps;

  const mustFind = async (accountId: string, publicId: string): Promise<EndpointRow> => {
    const m = ENDPOINT_ID.exec(publicId);
    const row = m ? await findEndpoint(db, accountId, m[1]!) : null;
    if (!row) throw new NotFoundError('Webhook endpoint not found');
    return row;
  };

  /** Validates a create or update body; every problem is reported at once. */
  const checkInput = async (input: EndpointInput, creating: boolean) => {
    const errors: Record<string, string[]> = {};
    if (creating && input.url === undefined) errors.url = ['The url field is required.'];
    if (input.url !== undefined) {
      const verdict = await checkWebhookUrl(input.url, { allowPrivate: deps.allowPrivateUrls, resolve: deps.resolve });
      if (!verdict.ok) errors.url = [verdict.error];
    }
    const eventTypes = checkEventTypes(input.event_types, errors);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    return { eventTypes };
  };

  return {
    /** What is wrong with a URL as an endpoint's (scheme, length, address), or null. */
    async urlProblem(url: string): Promise<string | null> {
      const verdict = await checkWebhookUrl(url, { allowPrivate: deps.allowPrivateUrls, resolve: deps.resolve });
      return verdict.ok ? null : verdict.error;
    },

    async create(accountId: string, input: EndpointInput): Promise<EndpointView & { secret: string }> {
      const { eventTypes } = await checkInput(input, true);
      const secret = generateSecret();
      const row = await db.transaction().execute(async (trx) => {
        await lockAccountEndpoints(trx, accountId);
        if ((await countEndpoints(trx, accountId)) >= MAX_ENDPOINTS) {
          throw new ValidationError({ url: [`An account may have at most ${MAX_ENDPOINTS} webhook endpoints.`] });
        }
        return insertEndpoint(trx, {
          accountId,
          url: input.url!,
          description: input.description ?? null,
          eventTypes: eventTypes ?? [],
          secret,
          at: clock.now(),
        });
      });
      return { ...viewEndpoint(row), secret };
    },

    async list(accountId: string): Promise<EndpointView[]> {
      return (await listEndpoints(db, accountId)).map(viewEndpoint);
    },

    async get(accountId: string, id: string): Promise<EndpointView> {
      return viewEndpoint(await mustFind(accountId, id));
    },

    async update(accountId: string, id: string, input: EndpointInput): Promise<EndpointView> {
      const row = await mustFind(accountId, id);
      const { eventTypes } = await checkInput(input, false);
      const updated = await db.transaction().execute(async (trx) => {
        const r = await updateEndpoint(
          trx,
          accountId,
          row.id,
          { url: input.url, description: input.description, eventTypes, status: input.status },
          clock.now(),
        );
        // Messages held while the endpoint was disabled go out now.
        if (r && input.status === 'enabled') await queueDispatch(trx);
        // A run holding it stops sending to it, or sends to the new URL, as this answers.
        if (r && (input.status === 'disabled' || input.url !== undefined)) await notifyEndpointChanged(trx, r.id);
        return r;
      });
      if (!updated) throw new NotFoundError('Webhook endpoint not found');
      return viewEndpoint(updated);
    },

    async remove(accountId: string, id: string): Promise<void> {
      const row = await mustFind(accountId, id);
      const deleted = await db.transaction().execute(async (trx) => {
        const done = await deleteEndpoint(trx, accountId, row.id);
        if (done) await notifyEndpointChanged(trx, row.id);
        return done;
      });
      if (!deleted) throw new NotFoundError('Webhook endpoint not found');
    },

    async rotateSecret(accountId: string, id: string): Promise<{ secret: string; previous_secret_expires_at: string }> {
      const row = await mustFind(accountId, id);
      const secret = generateSecret();
      const now = clock.now();
      const until = new Date(now.getTime() + ROTATION_OVERLAP_MS);
      // Notified, the dispatcher runs renew their leases at once and sign what they read ahead with both secrets.
      const rotated = await db.transaction().execute(async (trx) => {
        if (!(await rotateSecret(trx, row.id, secret, now, until))) return false;
        await notifyEndpointChanged(trx, row.id);
        return true;
      });
      if (!rotated) throw new NotFoundError('Webhook endpoint not found');
      return { secret, previous_secret_expires_at: until.toISOString() };
    },

    /** `held`: the endpoint is disabled, so the message waits until it is enabled again. */
    async sendTest(accountId: string, id: string, eventType: EventType): Promise<{ message_id: string; held: boolean }> {
      const row = await mustFind(accountId, id);
      const now = clock.now();
      const deliveryId = await db.transaction().execute(async (trx) => {
        const d = await insertTestMessage(trx, row, eventType, sampleEventData(eventType, now), now);
        if (d !== null) await queueDispatch(trx);
        return d;
      });
      if (deliveryId === null) throw new NotFoundError('Webhook endpoint not found');
      return { message_id: `msg_${deliveryId}`, held: row.status !== 'enabled' };
    },

    async listDeliveries(accountId: string, id: string, q: { page: number; per_page: number; status?: DeliveryStatus }) {
      const row = await mustFind(accountId, id);
      const { total, rows } = await listDeliveries(db, row.id, q.status, q.per_page, (q.page - 1) * q.per_page);
      return {
        data: rows.map(viewDelivery),
        meta: { total, per_page: q.per_page, current_page: q.page, last_page: Math.max(1, Math.ceil(total / q.per_page)) },
      };
    },

    /** Whether the message is held (the endpoint is disabled: it goes once the endpoint is enabled again). */
    async retryDelivery(accountId: string, id: string, deliveryId: string): Promise<{ held: boolean }> {
      const row = await mustFind(accountId, id);
      const m = DELIVERY_ID.exec(deliveryId);
      const found =
        m !== null &&
        (await db.transaction().execute(async (trx) => {
          const ok = await requeueDelivery(trx, row.id, m[1]!, clock.now());
          if (ok) await queueDispatch(trx);
          return ok;
        }));
      if (!found) throw new NotFoundError('Delivery not found');
      return { held: row.status !== 'enabled' };
    },

    async replay(accountId: string, id: string, afterId: number): Promise<{ queued: number }> {
      const row = await mustFind(accountId, id);
      const queued = await db.transaction().execute(async (trx) => {
        const n = await requeueFeedAfter(trx, row, afterId, clock.now());
        if (n > 0) await queueDispatch(trx);
        return n;
      });
      return { queued };
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
