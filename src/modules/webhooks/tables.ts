import type { ColumnType, Generated } from 'kysely';
import type { EventType } from '../../registry/model.ts';

/** Kysely table shapes of migrations 20261125000100_webhooks and 20261125000500_webhook_dispatch_leases (merged into src/db/schema.ts `Database`). */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type BigIntColumn = ColumnType<string, number | bigint | string, number | bigint | string>;

export type EndpointStatus = 'enabled' | 'disabled';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookEndpointsTable {
  id: Generated<string>;
  account_id: BigIntColumn;
  url: string;
  description: string | null;
  event_types: ColumnType<EventType[], EventType[] | undefined, EventType[]>;
  status: ColumnType<EndpointStatus, EndpointStatus | undefined, EndpointStatus>;
  disabled_reason: string | null;
  failing_since: Timestamp | null;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface WebhookSecretsTable {
  id: Generated<string>;
  endpoint_id: BigIntColumn;
  secret: string;
  created_at: GeneratedTimestamp;
  expires_at: Timestamp | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  endpoint_id: BigIntColumn;
  account_id: BigIntColumn;
  event_id: BigIntColumn | null;
  event_type: EventType;
  payload: ColumnType<unknown, string, string>;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  last_attempt_at: Timestamp | null;
  last_response_status: number | null;
  last_error: string | null;
  last_response_body: string | null;
  created_at: GeneratedTimestamp;
  delivered_at: Timestamp | null;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
