#!/bin/sh
# Creates Temporal's two databases on the compose PostgreSQL and brings their schemas up to the
# version shipped in this admin-tools image. Safe on every `docker compose up`: `create` and the
# initial `setup-schema` fail harmlessly when already done; `update-schema` applies only what is new
# and fails loudly on a real problem.
set -eu
SCHEMA_DIR="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}"

tool() {
  # The password comes from SQL_PASSWORD in the environment.
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

for db in temporal temporal_visibility; do
  case "$db" in
    temporal) schema=$SCHEMA_DIR/postgresql/v12/temporal/versioned ;;
    *) schema=$SCHEMA_DIR/postgresql/v12/visibility/versioned ;;
  esac
  tool --db "$db" create || echo "database $db exists"
  tool --db "$db" setup-schema -v 0.0 || echo "schema of $db already set up"
  tool --db "$db" update-schema -d "$schema"
done
echo 'Temporal schemas are up to date'
