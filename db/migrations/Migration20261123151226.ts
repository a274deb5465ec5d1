import { Migration } from '@mikro-orm/migrations';

export class Migration20261123151226 extends Migration {

  override name = 'Migration20261123151226';

  override up(): void | Promise<void> {
    this.addSql(`create table "webhook_delivery_attempts" ("id" uuid not null, "delivery_id" uuid not null, "attempt" int not null, "attempted_at" timestamptz not null, "duration_ms" int not null, "response_status" int null, "error" text null, "trigger" varchar(20) not null, primary key ("id"));`);
    this.addSql(`alter table "webhook_delivery_attempts" add constraint "webhook_delivery_attempts_delivery_id_attempt_unique" unique ("delivery_id", "attempt");`);

    this.addSql(`alter table "webhook_delivery_attempts" add constraint "webhook_delivery_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "webhook_delivery_attempts" cascade;`);
  }

}
