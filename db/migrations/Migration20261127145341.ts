import { Migration } from '@mikro-orm/migrations';

export class Migration20261127145341 extends Migration {

  override name = 'Migration20261127145341';

  override up(): void | Promise<void> {
    this.addSql(`create table "tool_calls" ("id" varchar(35) not null, "call_id" uuid not null, "name" varchar(64) not null, "arguments" jsonb not null, "status" varchar(20) not null, "attempts" int not null, "response_status" int null, "result" text null, "duration_ms" int null, "after_line_index" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "tool_calls_call_id_created_at_id_index" on "tool_calls" ("call_id", "created_at", "id");`);

    // Existing agents have no tools; the default only fills them in (the entity sets it on create).
    this.addSql(`alter table "agents" add "tools" jsonb not null default '[]', add "tools_secret" varchar(70) null;`);
    this.addSql(`alter table "agents" alter column "tools" drop default;`);

    this.addSql(`alter table "tool_calls" add constraint "tool_calls_call_id_foreign" foreign key ("call_id") references "calls" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "tool_calls" cascade;`);

    this.addSql(`alter table "agents" drop column "tools", drop column "tools_secret";`);
  }

}
