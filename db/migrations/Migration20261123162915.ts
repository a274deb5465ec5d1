import { Migration } from '@mikro-orm/migrations';

export class Migration20261123162915 extends Migration {

  override name = 'Migration20261123162915';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_delivery_attempts" add "response_excerpt" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_delivery_attempts" drop column "response_excerpt";`);
  }

}
