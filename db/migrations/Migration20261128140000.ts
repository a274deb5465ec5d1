import { Migration } from '@mikro-orm/migrations';

export class Migration20261128140000 extends Migration {

  override name = 'Migration20261128140000';

  override up(): void | Promise<void> {
    // Null: recordings kept until deleted, as before retention existed (telephony spec section 4).
    this.addSql(`alter table "workspaces" add "recording_retention_days" int null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "workspaces" drop column "recording_retention_days";`);
  }

}
