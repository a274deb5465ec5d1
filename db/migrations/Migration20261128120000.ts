import { Migration } from '@mikro-orm/migrations';

export class Migration20261128120000 extends Migration {

  override name = 'Migration20261128120000';

  override up(): void | Promise<void> {
    // Null: no analysis plan, as every agent had before (post-call spec section 1).
    this.addSql(`alter table "agents" add "analysis_plan" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "agents" drop column "analysis_plan";`);
  }

}
