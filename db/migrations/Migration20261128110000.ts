import { Migration } from '@mikro-orm/migrations';

export class Migration20261128110000 extends Migration {

  override name = 'Migration20261128110000';

  override up(): void | Promise<void> {
    // A bridged transfer leg's seconds (the SIP side's `transfer_ended`), for GET /usage.
    this.addSql(`alter table "calls" add "transfer_seconds" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "transfer_seconds";`);
  }

}
