import { Migration } from '@mikro-orm/migrations';

// An idempotency record's endpoint is the request's path as sent, ids included, of any length:
// varchar(300) turned a long garbled id into a 500 instead of its 404.
export class Migration20261127120748 extends Migration {

  override name = 'Migration20261127120748';

  override up(): void | Promise<void> {
    this.addSql(`alter table "idempotency_records" alter column "endpoint" type text using ("endpoint"::text);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "idempotency_records" alter column "endpoint" type varchar(300) using ("endpoint"::varchar(300));`);
  }

}
