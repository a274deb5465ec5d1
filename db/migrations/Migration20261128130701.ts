import { Migration } from '@mikro-orm/migrations';

export class Migration20261128130701 extends Migration {

  override name = 'Migration20261128130701';

  override up(): void | Promise<void> {
    // Test runs (post-call spec section 2); the defaults of agents.transfer_destinations and
    // calls.transfer_seconds stay (rows written without the ORM).
    this.addSql(`create table "test_runs" ("id" uuid not null, "workspace_id" uuid not null, "agent_id" uuid not null, "status" varchar(20) not null, "scenarios" jsonb not null, "runs_per_scenario" int not null, "created_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "test_runs_agent_id_created_at_id_index" on "test_runs" ("agent_id", "created_at", "id");`);
    this.addSql(`create index "test_runs_workspace_id_status_index" on "test_runs" ("workspace_id", "status");`);

    this.addSql(`create table "test_run_results" ("id" uuid not null, "test_run_id" uuid not null, "position" int not null, "scenario_index" int not null, "run" int not null, "call_id" uuid null, "status" varchar(20) not null, "reason" text null, primary key ("id"));`);
    this.addSql(`alter table "test_run_results" add constraint "test_run_results_test_run_id_position_unique" unique ("test_run_id", "position");`);

    this.addSql(`alter table "calls" add "test_caller" jsonb null;`);

    this.addSql(`alter table "test_runs" add constraint "test_runs_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "test_runs" add constraint "test_runs_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);

    this.addSql(`alter table "test_run_results" add constraint "test_run_results_test_run_id_foreign" foreign key ("test_run_id") references "test_runs" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "test_run_results" drop constraint "test_run_results_test_run_id_foreign";`);

    this.addSql(`drop table if exists "test_runs" cascade;`);
    this.addSql(`drop table if exists "test_run_results" cascade;`);

    this.addSql(`alter table "calls" drop column "test_caller";`);
  }

}
