import { Migration } from '@mikro-orm/migrations';

export class Migration20261123121629 extends Migration {

  override name = 'Migration20261123121629';

  override up(): void | Promise<void> {
    this.addSql(`alter table "idempotency_records" add "resource_id" uuid null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "idempotency_records" drop column "resource_id";`);
  }

}
