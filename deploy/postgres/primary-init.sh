#!/bin/bash
# Runs once, when the primary's data folder is new (the postgres image's
# /docker-entrypoint-initdb.d): the console's role and database, the role the
# standby replicates with, and synchronous replication.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  --set pw="$COUNTERSIGN_DB_PASSWORD" --set rpw="$REPLICATION_PASSWORD" \
  --set standbys="$SYNCHRONOUS_STANDBY_NAMES" <<'SQL'
CREATE ROLE countersign LOGIN PASSWORD :'pw';
-- A frozen console must not hold its row locks; through the pooler the
-- console cannot send this at connect time (docs/scale.md).
ALTER ROLE countersign SET idle_in_transaction_session_timeout = '10s';
CREATE DATABASE countersign OWNER countersign;
CREATE ROLE replicator REPLICATION LOGIN PASSWORD :'rpw';
-- Taken at the real start after this script: from then on a commit returns
-- only once the standby has flushed it.
ALTER SYSTEM SET synchronous_standby_names = :'standbys';
ALTER SYSTEM SET synchronous_commit = 'on';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
