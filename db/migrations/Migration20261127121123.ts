import { Migration } from '@mikro-orm/migrations';

// The calls live now, counted at every scrape by the calls_live metric (lib/metrics/database-metrics.ts):
// a partial index, so the count reads only the live calls however many have ended.
export class Migration20261127121123 extends Migration {

  override name = 'Migration20261127121123';

  override up(): void | Promise<void> {
    this.addSql(`create index "calls_live_index" on "calls" ("direction") where "status" in ('queued', 'ringing', 'in_progress');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "calls_live_index";`);
  }

}
