import { type Api, type CallOptions, eachItem, unwrap, withPage } from './core.ts';
import type { BodyOf, EventType, QueryOf, ResultOf, WebhookDelivery } from './types.ts';

type DeliveryQuery = Omit<QueryOf<'/api/v1/webhooks/{id}/deliveries', 'get'>, 'page' | 'per_page'>;

/** Webhook endpoints (Standard Webhooks): managed with the Master Token, read with any token. */
export class Webhooks {
  constructor(private readonly api: Api) {}

  /** A new endpoint; `data.secret` (for `verifyWebhook`) is shown here and at rotation only. */
  create(body: BodyOf<'/api/v1/webhooks', 'post'>, options: CallOptions = {}): Promise<ResultOf<'/api/v1/webhooks', 'post'>> {
    return unwrap(this.api.POST('/api/v1/webhooks', { body, signal: options.signal }));
  }

  list(options: CallOptions = {}): Promise<ResultOf<'/api/v1/webhooks', 'get'>> {
    return unwrap(this.api.GET('/api/v1/webhooks', { signal: options.signal }));
  }

  get(id: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/webhooks/{id}', 'get'>> {
    return unwrap(this.api.GET('/api/v1/webhooks/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  update(
    id: string,
    body: BodyOf<'/api/v1/webhooks/{id}', 'patch'>,
    options: CallOptions = {},
  ): Promise<ResultOf<'/api/v1/webhooks/{id}', 'patch'>> {
    return unwrap(this.api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id } }, body, signal: options.signal }));
  }

  delete(id: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/webhooks/{id}', 'delete'>> {
    return unwrap(this.api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  /** A new secret; for 24 hours messages are signed with the old one too. */
  rotateSecret(id: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/webhooks/{id}/rotate-secret', 'post'>> {
    return unwrap(this.api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id } }, signal: options.signal }));
  }

  /** Send one sample message of a type (`data.test: true`) through the ordinary delivery path. */
  test(id: string, eventType: EventType, options: CallOptions = {}): Promise<ResultOf<'/api/v1/webhooks/{id}/test', 'post'>> {
    return unwrap(
      this.api.POST('/api/v1/webhooks/{id}/test', { params: { path: { id } }, body: { event_type: eventType }, signal: options.signal }),
    );
  }

  /** One page of an endpoint's deliveries, newest first. */
  deliveries(
    id: string,
    query: DeliveryQuery & { page?: number; per_page?: number } = {},
    options: CallOptions = {},
  ): Promise<ResultOf<'/api/v1/webhooks/{id}/deliveries', 'get'>> {
    return unwrap(
      this.api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: withPage(query) }, signal: options.signal }),
    );
  }

  deliveriesAll(
    id: string,
    query: DeliveryQuery & { per_page?: number } = {},
    options: CallOptions = {},
  ): AsyncGenerator<WebhookDelivery, void, undefined> {
    return eachItem(async (page) => {
      const { data, meta } = await this.deliveries(id, { ...query, page }, options);
      return { items: data, lastPage: meta.last_page };
    });
  }

  /** Send one delivery again now. */
  retry(
    id: string,
    deliveryId: string,
    options: CallOptions = {},
  ): Promise<ResultOf<'/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', 'post'>> {
    return unwrap(
      this.api.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', {
        params: { path: { id, delivery_id: deliveryId } },
        signal: options.signal,
      }),
    );
  }

  /** Send again every event of the feed with an id above `afterId` (recovery after an outage). */
  replay(id: string, afterId: number, options: CallOptions = {}): Promise<ResultOf<'/api/v1/webhooks/{id}/replay', 'post'>> {
    return unwrap(
      this.api.POST('/api/v1/webhooks/{id}/replay', { params: { path: { id } }, body: { after_id: afterId }, signal: options.signal }),
    );
  }
}
