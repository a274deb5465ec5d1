import { Migration } from '@mikro-orm/migrations';

export class Migration20261128150000 extends Migration {

  override name = 'Migration20261128150000';

  override up(): void | Promise<void> {
    // Calls before this knew only `transferred_to`: their `transfer` is null.
    this.addSql(`alter table "calls" add "transfer" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "transfer";`);
  }

}
