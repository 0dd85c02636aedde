#!/bin/bash
# The standby's entrypoint: on its first start it clones the primary with
# pg_basebackup (creating a replication slot named after it), then it runs as
# a streaming standby whose application_name is the one the primary's
# synchronous_standby_names lists. Its arguments go to postgres. Promote it
# with
#   podman compose exec standby pg_ctl promote
set -euo pipefail
export PGPASSWORD=$REPLICATION_PASSWORD
port=${PRIMARY_PORT:-5432}
if [[ ! -s $PGDATA/PG_VERSION ]]; then
  until pg_isready -q -h "$PRIMARY_HOST" -p "$port" -U replicator -d postgres; do sleep 1; done
  pg_basebackup -h "$PRIMARY_HOST" -p "$port" -U replicator -D "$PGDATA" -X stream -C -S "$STANDBY_NAME" --checkpoint=fast
  chmod 0700 "$PGDATA"
  touch "$PGDATA/standby.signal"
  cat >> "$PGDATA/postgresql.auto.conf" <<CONF
primary_conninfo = 'host=$PRIMARY_HOST port=$port user=replicator password=$REPLICATION_PASSWORD application_name=$STANDBY_NAME'
primary_slot_name = '$STANDBY_NAME'
CONF
fi
exec postgres "$@"
