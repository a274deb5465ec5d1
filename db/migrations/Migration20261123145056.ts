import { Migration } from '@mikro-orm/migrations';

export class Migration20261123145056 extends Migration {

  override name = 'Migration20261123145056';

  override up(): void | Promise<void> {
    this.addSql(`create table "dashboard_credentials" ("email" varchar(320) not null, "password_hash" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("email"));`);

    this.addSql(`create table "sign_in_attempt_windows" ("bucket" varchar(120) not null, "window_start" bigint not null, "count" int not null default 0, primary key ("bucket", "window_start"));`);

    this.addSql(`create table "dashboard_sessions" ("id" uuid not null, "token_hash" varchar(64) not null, "email" varchar(320) not null, "user_id" uuid null, "csrf_token" varchar(64) not null, "created_at" timestamptz not null, "last_seen_at" timestamptz not null, "expires_at" timestamptz not null, "ended_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "dashboard_sessions" add constraint "dashboard_sessions_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "dashboard_invites" ("id" uuid not null, "user_id" uuid not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "dashboard_invites" add constraint "dashboard_invites_token_hash_unique" unique ("token_hash");`);

    this.addSql(`alter table "calls" add "browser_far_end" boolean not null default false;`);

    this.addSql(`alter table "dashboard_sessions" add constraint "dashboard_sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);

    this.addSql(`alter table "dashboard_invites" add constraint "dashboard_invites_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "dashboard_credentials" cascade;`);
    this.addSql(`drop table if exists "sign_in_attempt_windows" cascade;`);
    this.addSql(`drop table if exists "dashboard_sessions" cascade;`);
    this.addSql(`drop table if exists "dashboard_invites" cascade;`);

    this.addSql(`alter table "calls" drop column "browser_far_end";`);
  }

}
