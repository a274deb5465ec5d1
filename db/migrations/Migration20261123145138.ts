import { Migration } from '@mikro-orm/migrations';

export class Migration20261123145138 extends Migration {

  override name = 'Migration20261123145138';

  override up(): void | Promise<void> {
    this.addSql(`create table "campaigns" ("id" uuid not null, "workspace_id" uuid not null, "agent_id" uuid not null, "name" varchar(200) not null, "from_number" varchar(16) null, "status" varchar(20) not null, "paused_reason" varchar(40) null, "start_at" timestamptz null, "timezone" varchar(64) not null, "windows" jsonb not null, "max_concurrent_calls" int not null, "retry" jsonb not null, "first_message" text null, "metadata" jsonb not null, "completed_event_id" varchar(40) null, "created_at" timestamptz not null, "started_at" timestamptz null, "ended_at" timestamptz null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "campaigns_workspace_id_created_at_id_index" on "campaigns" ("workspace_id", "created_at", "id");`);
    this.addSql(`create index "campaigns_workspace_id_status_created_at_index" on "campaigns" ("workspace_id", "status", "created_at");`);

    this.addSql(`create table "campaign_recipients" ("id" uuid not null, "campaign_id" uuid not null, "position" int not null, "to_number" varchar(16) not null, "metadata" jsonb not null, "status" varchar(20) not null, "attempts" int not null, "call_ids" jsonb not null, "current_call_id" uuid null, "last_end_reason" varchar(40) null, "retry_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "campaign_recipients_campaign_id_status_position_index" on "campaign_recipients" ("campaign_id", "status", "position");`);
    this.addSql(`alter table "campaign_recipients" add constraint "campaign_recipients_campaign_id_to_number_unique" unique ("campaign_id", "to_number");`);
    this.addSql(`alter table "campaign_recipients" add constraint "campaign_recipients_campaign_id_position_unique" unique ("campaign_id", "position");`);

    this.addSql(`alter table "calls" add "campaign_id" uuid null;`);
    this.addSql(`alter table "calls" add constraint "calls_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on delete set null;`);

    this.addSql(`alter table "campaigns" add constraint "campaigns_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "campaigns" add constraint "campaigns_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`alter table "campaign_recipients" add constraint "campaign_recipients_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "campaign_recipients" drop constraint "campaign_recipients_campaign_id_foreign";`);
    this.addSql(`alter table "calls" drop constraint "calls_campaign_id_foreign";`);

    this.addSql(`drop table if exists "campaigns" cascade;`);
    this.addSql(`drop table if exists "campaign_recipients" cascade;`);

    this.addSql(`alter table "calls" drop column "campaign_id";`);
  }

}
