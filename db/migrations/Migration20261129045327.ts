import { Migration } from '@mikro-orm/migrations';

// Answering machines and the keypad (telephony spec sections 6 and 7): the agent's settings (null:
// the defaults) and who answered a call.
export class Migration20261129045327 extends Migration {
  override name = 'Migration20261129045327';

  override up(): void | Promise<void> {
    this.addSql(`alter table "agents" add "voicemail" jsonb null, add "keypad" jsonb null;`);
    this.addSql(`alter table "calls" add "answered_by" varchar(10) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "agents" drop column "voicemail", drop column "keypad";`);
    this.addSql(`alter table "calls" drop column "answered_by";`);
  }
}
