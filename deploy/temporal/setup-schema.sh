#!/bin/sh
# Temporal's databases and schemas on the compose PostgreSQL, with temporal-sql-tool from the admin-tools image,
# as Temporal's own compose files do it. Safe to run again: an existing database is kept, and the schemas are
# brought up to the image's version.
set -eu

# The password comes from SQL_PASSWORD.
sql() {
  temporal-sql-tool --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

echo "waiting for PostgreSQL at $POSTGRES_SEEDS:$DB_PORT"
until nc -z "$POSTGRES_SEEDS" "$DB_PORT"; do sleep 1; done

for database in temporal temporal_visibility; do
  case "$database" in
    temporal) schema=temporal ;;
    *) schema=visibility ;;
  esac
  sql --db "$database" create
  sql --db "$database" setup-schema -v 0.0
  sql --db "$database" update-schema -d "/etc/temporal/schema/postgresql/v12/$schema/versioned"
done
echo "Temporal's schemas are ready"
