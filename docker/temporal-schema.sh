#!/bin/sh
# Creates Temporal's two databases on PostgreSQL and brings their schemas up to the version of the
# temporal-sql-tool that runs it, from the schemas embedded in that tool (plugin postgres12,
# postgresql/v12/temporal and postgresql/v12/visibility). The same commands for both users:
#   docker-compose.yml      the temporal-schema service, in the temporalio/admin-tools image
#   npm run start:cluster   scripts/cluster/temporal-server.ts, with the tool it builds
#                           (TEMPORAL_SQL_TOOL names it)
# Safe to rerun: `create` fails harmlessly when the database exists, `setup-schema -v 0.0` only
# creates the version tables when they are missing, and `update-schema` applies only what is new
# (and fails loudly on a real problem).
# Environment: POSTGRES_SEEDS (host), DB_PORT, POSTGRES_USER, SQL_PASSWORD (read by the tool),
# DBNAME (default temporal), VISIBILITY_DBNAME (default temporal_visibility).
set -eu
SQL_TOOL="${TEMPORAL_SQL_TOOL:-temporal-sql-tool}"

tool() {
  "$SQL_TOOL" --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

for which in temporal visibility; do
  case "$which" in
    temporal) db="${DBNAME:-temporal}" ;;
    *) db="${VISIBILITY_DBNAME:-temporal_visibility}" ;;
  esac
  tool --db "$db" create-database || echo "database $db exists"
  tool --db "$db" setup-schema -v 0.0
  tool --db "$db" update-schema --schema-name "postgresql/v12/$which"
done
echo 'Temporal schemas are up to date'
