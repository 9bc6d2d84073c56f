#!/usr/bin/env bash
# Measures what the capacity model of docs/deploy.md needs and the
# once-bench commands do not: how many jobs one `once work` process
# finishes per second, and its CPU per job, with the in-process simulators
# (no external latency: the worker's own cost). The jobs are store
# credential checks, the job every store create starts. (The CPU a store
# create costs `once serve` is `once-bench http --store-creates`'s: curl,
# one process per request, is too slow a client to measure it here.)
#
#   make build && bash scripts/bench-work.sh [JOBS] [REPS]
#
# Per repetition: a fresh database on the local cluster, `serve` (API only)
# and `dispatch` on Redis Streams; JOBS store creates (8 clients, curl) go
# to `serve` with no worker running, so their jobs wait in the stream;
# then one `work` starts and the clock and its CPU run from its first
# finished job to its last (its start is in neither), less its idle CPU.
# Prints one line per repetition, then the median (min-max).
# Needs PostgreSQL (superuser postgres, trust, 127.0.0.1:5432), Redis
# (127.0.0.1:6379), curl and psql.
set -euo pipefail

JOBS=${1:-2000}
REPS=${2:-3}
SUPER='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
BIN=${BIN:-bin/once}
TICK=$(getconf CLK_TCK)

cpu_seconds() { # pid: user+system CPU seconds so far
  awk -v t="$TICK" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_ready() { # url
  for _ in $(seq 300); do curl -fs -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "not ready: $1" >&2; return 1
}

# cleanup removes what a repetition made, also when it fails half-way.
CUR_NAME= CUR_PREFIX= CUR_PIDS=
cleanup() {
  [ -n "$CUR_PIDS" ] && { kill -TERM $CUR_PIDS 2>/dev/null; wait $CUR_PIDS 2>/dev/null || true; }
  if [ -n "$CUR_NAME" ]; then
    psql "$SUPER" -qc "DROP DATABASE IF EXISTS ${CUR_NAME} WITH (FORCE)" -c "DROP ROLE IF EXISTS ${CUR_NAME}_app" \
      -c "DROP ROLE IF EXISTS ${CUR_NAME}_owner" >/dev/null 2>&1 || true
    redis-cli -h 127.0.0.1 -p 6379 --scan --pattern "${CUR_PREFIX}*" | xargs -r redis-cli -h 127.0.0.1 -p 6379 del >/dev/null
  fi
  CUR_NAME= CUR_PREFIX= CUR_PIDS=
}
trap cleanup EXIT

rep() {
  local n=$1 name="once_work_$$_$1"
  CUR_NAME=$name CUR_PREFIX="benchwork.$$.$n."
  local db_url="postgres://${name}_app@127.0.0.1:5432/${name}?sslmode=disable"
  "$BIN" bootstrap --superuser-url "$SUPER" --database "$name" --owner "${name}_owner" --app "${name}_app" >/dev/null
  ONCE_MIGRATE_DATABASE_URL="postgres://${name}_owner@127.0.0.1:5432/${name}?sslmode=disable" "$BIN" migrate >/dev/null 2>&1

  export DATABASE_URL=$db_url ONCE_QUEUE=redis ONCE_QUEUE_PREFIX="benchwork.$$.$n." ONCE_LOG_LEVEL=warn
  export ONCE_JWT_SECRET=$(head -c 48 /dev/urandom | base64 -w0)
  export ONCE_IDEMPOTENCY_SECRETS=k1:$(head -c 32 /dev/urandom | base64 -w0)
  export ONCE_CREDENTIAL_KEYS=k1:$(head -c 32 /dev/urandom | base64 -w0)
  local user ws token api
  user=$(cat /proc/sys/kernel/random/uuid)
  ws=$("$BIN" workspace create --name bench --admin "$user" 2>/dev/null | tail -n1)
  token=$("$BIN" token --workspace "$ws" --user "$user" 2>/dev/null | tail -n1)
  api=127.0.0.1:$(free_port)

  ONCE_DISPATCHER=false ONCE_WORKER=false ONCE_HTTP_ADDR=$api ONCE_OPS_ADDR=127.0.0.1:0 "$BIN" serve 2>/dev/null &
  local serve=$!
  ONCE_OPS_ADDR=127.0.0.1:0 "$BIN" dispatch 2>/dev/null &
  local dispatch=$!
  CUR_PIDS="$serve $dispatch"
  wait_ready "http://$api/healthz"

  export API=$api TOKEN=$token
  for i in $(seq "$JOBS"); do echo "$i $(cat /proc/sys/kernel/random/uuid)"; done |
    xargs -P 8 -n 2 sh -c 'curl -s -o /dev/null -w "%{http_code}\n" -X POST "http://$API/v1/stores" \
      -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -H "Idempotency-Key: $1" \
      -d "{\"platform\":\"shopify\",\"name\":\"Bench $0\",\"external_shop_id\":\"bench-$0\",\"credentials\":{\"api_key\":\"ak\",\"api_secret\":\"sk_bench_secret\"}}"' |
    sort | uniq -c | grep -v ' 201$' >&2 || true
  local q="postgres://postgres@127.0.0.1:5432/${name}?sslmode=disable" created
  created=$(psql "$q" -Atqc "SELECT count(*) FROM stores")
  until [ "$(psql "$q" -Atqc "SELECT count(*) FROM outbox_events WHERE status = 'dispatched'")" -ge "$created" ]; do sleep 0.2; done

  # The clock and the CPU count from the first job done, so the process's
  # start is in neither.
  ONCE_OPS_ADDR=127.0.0.1:0 "$BIN" work 2>/dev/null &
  local work=$!
  CUR_PIDS="$serve $dispatch $work"
  local done_sql="SELECT count(*) FROM operations WHERE status IN ('succeeded', 'failed')"
  local first w0 wc0 w1 wc1
  until first=$(psql "$q" -Atqc "$done_sql") && [ "$first" -gt 0 ]; do sleep 0.02; done
  w0=$(date +%s.%N); wc0=$(cpu_seconds "$work")
  until [ "$(psql "$q" -Atqc "$done_sql")" -ge "$created" ]; do sleep 0.05; done
  w1=$(date +%s.%N); wc1=$(cpu_seconds "$work")
  local work_idle
  sleep 5; work_idle=$(awk -v a="$wc1" -v b="$(cpu_seconds "$work")" 'BEGIN { printf "%.4f", (b - a) / 5 }')
  cleanup
  awk -v n="$created" -v f="$first" -v c="$w0" -v d="$w1" -v wc0="$wc0" -v wc1="$wc1" -v wi="$work_idle" -v rep="$n" 'BEGIN {
    jobs = n - f
    printf "rep %d: %d jobs at %.0f/s by one work process, %.0f µs of its CPU each (idle: %.0f ms/s)\n",
      rep, jobs, jobs / (d - c), ((wc1 - wc0) - wi * (d - c)) / jobs * 1e6, wi * 1e3
  }'
  unset DATABASE_URL
}

out=$(mktemp)
for n in $(seq "$REPS"); do rep "$n" >>"$out"; tail -n 1 "$out"; done
awk '
  { match($0, /at ([0-9]+)\/s by one work process, ([0-9]+) µs/, m); j[NR] = m[1]; w[NR] = m[2] }
  function med(a, n,   i, k, t, b) { for (i = 1; i <= n; i++) b[i] = a[i]; for (i = 1; i <= n; i++) for (k = i + 1; k <= n; k++) if (b[k] < b[i]) { t = b[i]; b[i] = b[k]; b[k] = t }
    return sprintf("%s (%s-%s)", b[int((n + 1) / 2)], b[1], b[n]) }
  END { printf "median (min-max) of %d: %s jobs/s per work process, %s µs of its CPU per job\n", NR, med(j, NR), med(w, NR) }' "$out"
rm -f "$out"
