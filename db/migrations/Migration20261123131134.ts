import { Migration } from '@mikro-orm/migrations';

export class Migration20261123131134 extends Migration {

  override name = 'Migration20261123131134';

  override up(): void | Promise<void> {
    this.addSql(`create table "webhook_recoveries" ("id" uuid not null, "workspace_id" uuid not null, "endpoint_id" uuid not null, "status" varchar(20) not null, "stop_reason" varchar(40) null, "since" timestamptz not null, "until" timestamptz null, "events_total" int not null default 0, "events_sent" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "webhook_recoveries_endpoint_id_created_at_index" on "webhook_recoveries" ("endpoint_id", "created_at");`);
    this.addSql(`create unique index "webhook_recoveries_one_running_per_endpoint" on "webhook_recoveries" ("endpoint_id") where status = 'running';`);

    this.addSql(`create table "webhook_recovery_items" ("recovery_id" uuid not null, "position" int not null, "event_id" varchar(40) not null, "failed_delivery" uuid not null, "delivery" uuid null, primary key ("recovery_id", "position"));`);

    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_event_id_endpoint_id_unique";`);
    this.addSql(`alter table "webhook_deliveries" add "origin" varchar(20) not null default 'event', add "resent_from_id" uuid null, add "recovery_id" uuid null;`);
    // Deliveries of test events made before this migration were made by POST …/test.
    this.addSql(`update "webhook_deliveries" set "origin" = 'test' where "event_type" = 'webhook.test';`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_resent_from_id_foreign" foreign key ("resent_from_id") references "webhook_deliveries" ("id") on delete set null;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_recovery_id_foreign" foreign key ("recovery_id") references "webhook_recoveries" ("id") on delete set null;`);
    this.addSql(`create index "webhook_deliveries_event_id_endpoint_id_index" on "webhook_deliveries" ("event_id", "endpoint_id");`);
    this.addSql(`create unique index "webhook_deliveries_event_id_endpoint_id_unique" on "webhook_deliveries" ("event_id", "endpoint_id") where resent_from_id is null;`);

    this.addSql(`alter table "webhook_recoveries" add constraint "webhook_recoveries_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_recoveries" add constraint "webhook_recoveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_recovery_items" add constraint "webhook_recovery_items_recovery_id_foreign" foreign key ("recovery_id") references "webhook_recoveries" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_recovery_items" add constraint "webhook_recovery_items_event_id_foreign" foreign key ("event_id") references "events" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_recovery_items" drop constraint "webhook_recovery_items_recovery_id_foreign";`);
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_recovery_id_foreign";`);

    this.addSql(`drop table if exists "webhook_recoveries" cascade;`);
    this.addSql(`drop table if exists "webhook_recovery_items" cascade;`);

    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_resent_from_id_foreign";`);

    this.addSql(`drop index "webhook_deliveries_event_id_endpoint_id_index";`);
    this.addSql(`drop index "webhook_deliveries_event_id_endpoint_id_unique";`);
    this.addSql(`alter table "webhook_deliveries" drop column "origin", drop column "resent_from_id", drop column "recovery_id";`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_endpoint_id_unique" unique ("event_id", "endpoint_id");`);
  }

}
