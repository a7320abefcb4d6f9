#!/bin/sh
# Temporal's databases and schemas on the compose PostgreSQL, with temporal-sql-tool from the admin-tools image,
# as Temporal's own compose files do it. Safe to run again: an existing database is kept, and the schemas are
# brought up to the tool's version. Runs outside a container as well (the deployment rehearsal runs it so):
# TEMPORAL_SQL_TOOL names the tool (temporal-sql-tool in the image), and the schemas are the ones built into it.
set -eu

# The password comes from SQL_PASSWORD.
sql() {
  "${TEMPORAL_SQL_TOOL:-temporal-sql-tool}" --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

# Creates the database once PostgreSQL answers, waiting up to a minute (the tool keeps one that exists already).
create_database() {
  attempts=0
  until output=$(sql --db "$1" create 2>&1); do
    attempts=$((attempts + 1))
    if [ "$attempts" -ge 60 ]; then
      printf '%s\n' "$output" >&2
      return 1
    fi
    echo "waiting for PostgreSQL at $POSTGRES_SEEDS:$DB_PORT"
    sleep 1
  done
}

for database in temporal temporal_visibility; do
  case "$database" in
    temporal) schema=temporal ;;
    *) schema=visibility ;;
  esac
  create_database "$database"
  sql --db "$database" setup-schema -v 0.0
  sql --db "$database" update-schema --schema-name "postgresql/v12/$schema"
done
echo "Temporal's schemas are ready"
