import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000402 extends Migration {

  override name = 'Migration20261122000402';

  override up(): void | Promise<void> {
    this.addSql(`create table "rate_limit_windows" ("bucket" varchar(80) not null, "window_start" bigint not null, "count" int not null default 0, primary key ("bucket", "window_start"));`);

    this.addSql(`create table "workspaces" ("id" uuid not null, "name" varchar(200) not null, "plan" varchar(20) not null, "requests_per_second" int not null default 50, "calls_per_minute" int not null default 30, "calls_per_day" int not null default 1000, "minutes_quota" int not null default 10000, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);

    this.addSql(`create table "webhook_endpoints" ("id" uuid not null, "workspace_id" uuid not null, "url" text not null, "events" text[] not null, "status" varchar(20) not null, "description" varchar(500) null, "secret" varchar(70) not null, "failing_since" timestamptz null, "disabled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_endpoints_workspace_id_created_at_id_index" on "webhook_endpoints" ("workspace_id", "created_at", "id");`);

    this.addSql(`create table "users" ("id" uuid not null, "workspace_id" uuid not null, "email" varchar(320) not null, "role" varchar(20) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_workspace_id_email_unique" unique ("workspace_id", "email");`);

    this.addSql(`create table "idempotency_records" ("id" uuid not null, "workspace_id" uuid not null, "key" varchar(255) not null, "endpoint" varchar(300) not null, "fingerprint" varchar(64) not null, "state" varchar(20) not null, "response_status" int null, "response_body" text null, "locked_until" timestamptz not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "idempotency_records_expires_at_index" on "idempotency_records" ("expires_at");`);
    this.addSql(`alter table "idempotency_records" add constraint "idempotency_records_workspace_id_key_unique" unique ("workspace_id", "key");`);

    this.addSql(`create table "api_keys" ("id" uuid not null, "workspace_id" uuid not null, "created_by_id" uuid not null, "name" varchar(200) not null, "secret_hash" varchar(64) not null, "scopes" text[] not null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_secret_hash_unique" unique ("secret_hash");`);

    this.addSql(`create table "agents" ("id" uuid not null, "workspace_id" uuid not null, "name" varchar(200) not null, "description" text null, "status" varchar(20) not null, "language" varchar(20) null, "system_prompt" text null, "first_message" text null, "outbound_first_message" text null, "voice_provider" varchar(100) null, "voice_id" varchar(200) null, "llm_provider" varchar(100) null, "llm_model" varchar(200) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "agents_workspace_id_created_at_id_index" on "agents" ("workspace_id", "created_at", "id");`);

    this.addSql(`create table "phone_numbers" ("id" uuid not null, "workspace_id" uuid not null, "number" varchar(16) not null, "label" varchar(200) null, "agent_id" uuid null, "status" varchar(20) not null, "capabilities" text[] not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "phone_numbers" add constraint "phone_numbers_number_unique" unique ("number");`);
    this.addSql(`create index "phone_numbers_workspace_id_created_at_id_index" on "phone_numbers" ("workspace_id", "created_at", "id");`);
    this.addSql(`create index "phone_numbers_agent_id_index" on "phone_numbers" ("agent_id");`);

    this.addSql(`create table "calls" ("id" uuid not null, "workspace_id" uuid not null, "agent_id" uuid null, "direction" varchar(10) not null, "channel" varchar(10) not null, "status" varchar(20) not null, "from_number" varchar(16) null, "to_number" varchar(16) null, "started_at" timestamptz not null, "answered_at" timestamptz null, "ended_at" timestamptz null, "duration_seconds" int null, "end_reason" varchar(40) null, "metadata" jsonb not null, "has_recording" boolean null, "analysis" jsonb null, "ring_timeout_seconds" int null, "first_message" text null, "agent_snapshot" jsonb not null, "transferred_to" varchar(16) null, "from_label" varchar(200) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "calls_workspace_id_started_at_id_index" on "calls" ("workspace_id", "started_at", "id");`);
    this.addSql(`create index "calls_workspace_id_agent_id_started_at_index" on "calls" ("workspace_id", "agent_id", "started_at");`);
    this.addSql(`create index "calls_workspace_id_status_index" on "calls" ("workspace_id", "status");`);

    this.addSql(`create table "transcript_entries" ("id" uuid not null, "call_id" uuid not null, "index" int not null, "role" varchar(10) not null, "text" text not null, "offset_seconds" int not null default 0, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "transcript_entries" add constraint "transcript_entries_call_id_index_unique" unique ("call_id", "index");`);

    this.addSql(`create table "events" ("id" varchar(40) not null, "workspace_id" uuid not null, "type" varchar(40) not null, "api_version" varchar(10) not null default 'v1', "call_id" uuid null, "body" text not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "events_workspace_id_created_at_index" on "events" ("workspace_id", "created_at");`);
    this.addSql(`alter table "events" add constraint "events_call_id_type_unique" unique ("call_id", "type");`);

    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "workspace_id" uuid not null, "endpoint_id" uuid not null, "event_id" varchar(40) not null, "event_type" varchar(40) not null, "status" varchar(20) not null, "response_status" int null, "attempts" int not null default 0, "error" text null, "next_attempt_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "delivered_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_created_at_id_index" on "webhook_deliveries" ("endpoint_id", "created_at", "id");`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_endpoint_id_unique" unique ("event_id", "endpoint_id");`);

    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    this.addSql(`alter table "users" add constraint "users_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    this.addSql(`alter table "idempotency_records" add constraint "idempotency_records_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_created_by_id_foreign" foreign key ("created_by_id") references "users" ("id") on delete cascade;`);

    this.addSql(`alter table "agents" add constraint "agents_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    this.addSql(`alter table "phone_numbers" add constraint "phone_numbers_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "phone_numbers" add constraint "phone_numbers_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete set null;`);

    this.addSql(`alter table "calls" add constraint "calls_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "calls" add constraint "calls_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete set null;`);

    this.addSql(`alter table "transcript_entries" add constraint "transcript_entries_call_id_foreign" foreign key ("call_id") references "calls" ("id") on delete cascade;`);

    this.addSql(`alter table "events" add constraint "events_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "events" add constraint "events_call_id_foreign" foreign key ("call_id") references "calls" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "events" ("id") on delete cascade;`);
  }

}
