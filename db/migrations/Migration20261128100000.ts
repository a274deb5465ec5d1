import { Migration } from '@mikro-orm/migrations';

export class Migration20261128100000 extends Migration {

  override name = 'Migration20261128100000';

  override up(): void | Promise<void> {
    // Existing agents, and rows written without the ORM, have no transfer destinations.
    this.addSql(`alter table "agents" add "transfer_destinations" jsonb not null default '[]';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "agents" drop column "transfer_destinations";`);
  }

}
