import { Migration } from '@mikro-orm/migrations';

// has_recording is whether the call's recording file exists (lib/recordings/), read when asked:
// a stored flag could only drift from the file.
export class Migration20261125170000 extends Migration {

  override name = 'Migration20261125170000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "has_recording";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" add "has_recording" boolean null;`);
  }

}
