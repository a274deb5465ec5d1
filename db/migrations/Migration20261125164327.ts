import { Migration } from '@mikro-orm/migrations';

export class Migration20261125164327 extends Migration {

  override name = 'Migration20261125164327';

  override up(): void | Promise<void> {
    this.addSql(`alter table "calls" add "media_gateway" varchar(200) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "media_gateway";`);
  }

}
