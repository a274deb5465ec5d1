import { Migration } from '@mikro-orm/migrations';

export class Migration20261128080000 extends Migration {

  override name = 'Migration20261128080000';

  override up(): void | Promise<void> {
    // Null: the deployment's DIALING_COUNTRIES; `{*}`: every country (high-cost numbers still refused).
    this.addSql(`alter table "workspaces" add "dialing_countries" text[] null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "workspaces" drop column "dialing_countries";`);
  }

}
