#!/usr/bin/env bash
# Makes sure the services the tests talk to are installed and running:
# PostgreSQL, Redis and RabbitMQ, Node.js for the BullMQ worker, Chromium
# for the operator console's browser test, HAProxy for the rolling restart
# test, PgBouncer for the pooler test and the versitygw S3 server the
# object-store tests start privately. Installs them with apt-get where
# missing (a fresh machine), starts them where down, and waits until each
# answers.
# Idempotent: on a machine where all three run it only checks.
set -euo pipefail

log() { printf 'services: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=
install() {
  if [ -z "$apt_updated" ]; then
    log "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    apt_updated=1
  fi
  log "installing $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

wait_for() { # name, tries, command...
  local name=$1 tries=$2; shift 2
  for _ in $(seq "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  log "$name did not become ready"; return 1
}

pg_ready() { psql "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable" -Atqc 'select 1' >/dev/null; }

postgres() {
  command -v pg_ctlcluster >/dev/null || install postgresql postgresql-client
  if ! pg_ready 2>/dev/null; then
    local ver; ver=$(ls /etc/postgresql | sort -V | tail -n1)
    if ! pg_lsclusters -h | grep -q online; then
      log "starting PostgreSQL $ver"
      as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
    fi
    if ! wait_for "PostgreSQL" 10 pg_ready; then
      # A fresh install asks for passwords over TCP; the tests connect as the
      # superuser with trust, as on the development machines.
      log "allowing trust auth on loopback for the test superuser"
      local hba="/etc/postgresql/$ver/main/pg_hba.conf"
      as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
      as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main reload || true
      wait_for "PostgreSQL" 30 pg_ready
    fi
  fi
  log "PostgreSQL ready"
}

# The shared Redis on 6379; the same redis-server (7 or later) also runs the
# private Redis Clusters and Sentinels the tests start on free ports
# (testsupport/redistest; a Sentinel is redis-server --sentinel).
redis() {
  command -v redis-server >/dev/null || install redis-server
  local major; major=$(redis-server --version | sed -E 's/.* v=([0-9]+)\..*/\1/')
  if [ "${major:-0}" -lt 7 ]; then
    log "redis-server $major.x is too old for the Cluster and Sentinel tests (7 or later: --cluster-port); they skip, or fail with CI set"
  fi
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    log "starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no >&2
    wait_for "Redis" 30 redis-cli -h 127.0.0.1 -p 6379 ping
  fi
  log "Redis ready"
}

rabbitmq() {
  command -v rabbitmq-server >/dev/null || install rabbitmq-server
  if ! (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; then
    log "starting RabbitMQ"
    as_root rabbitmq-server -detached >&2 || true
    wait_for "RabbitMQ" 90 bash -c 'exec 3<>/dev/tcp/127.0.0.1/5672'
  fi
  log "RabbitMQ ready"
}

# HAProxy is the load balancer of the rolling-restart test
# (cmd/once/rolling_test.go), which starts a private instance with its own
# configuration; the system service is never started. (Named balancer: a
# function named haproxy would answer `command -v`.)
balancer() {
  command -v haproxy >/dev/null || install haproxy
  log "HAProxy $(command haproxy -v | head -n1 | cut -d' ' -f3) ready"
}

# Patroni and etcd run the failover tests' private cluster
# (testsupport/patroni: etcd and three PostgreSQL nodes under Patroni on
# free ports, in the test's own directories). Only installed: their system
# services must never run, nor hold etcd's default ports 2379/2380, so the
# packages are installed with a policy-rc.d that forbids starting services
# (where the machine has none of its own), and whatever the packages
# started anyway is stopped and disabled.
ha() {
  if ! command -v patroni >/dev/null || ! command -v etcd >/dev/null; then
    local policy=/usr/sbin/policy-rc.d made=
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
      as_root chmod 755 "$policy"
      made=1
    fi
    install --no-install-recommends patroni etcd-server etcd-client || { [ -z "$made" ] || as_root rm -f "$policy"; return 1; }
    [ -z "$made" ] || as_root rm -f "$policy"
    local svc
    for svc in etcd patroni; do
      if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
        as_root systemctl disable --now "$svc" >/dev/null 2>&1 || true
      elif [ -x "/etc/init.d/$svc" ]; then
        as_root "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
        as_root update-rc.d "$svc" disable >/dev/null 2>&1 || true
      fi
    done
  fi
  log "Patroni $(patroni --version 2>&1 | awk '{print $2}'), etcd $(etcd --version 2>/dev/null | awk '/etcd Version/{print $3}') installed"
}

# Node.js runs the stock BullMQ worker the BullMQ tests are judged by; the
# tests install its pinned packages themselves (testsupport/bullmqtest).
nodejs() {
  command -v node >/dev/null && command -v npm >/dev/null || install nodejs npm
  log "Node.js $(node --version) ready"
}

# Chromium runs the operator console's browser test (chromedp drives it
# headless from Go; app/console_browser_test.go).
# (Named browser: a function named chromium would answer `command -v`.)
browser() {
  command -v chromium >/dev/null || install chromium
  log "Chromium ready"
}

# PgBouncer is only installed: the test that needs it runs a private one
# (testsupport/pgbouncer) and never uses the system service.
# (Named pooler: a function named pgbouncer would answer `command -v`.)
pooler() {
  command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || install pgbouncer
  log "PgBouncer installed"
}

# A German locale lets a private PostgreSQL answer in German
# (lc_messages=de_DE.UTF-8), so a test shows the adapter never reads the
# servers' words (adapters/postgres/moved_rows_test.go). PostgreSQL's
# package ships the translations; the locale itself is made here.
german() {
  if ! locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; then
    command -v localedef >/dev/null && [ -d /usr/share/i18n/locales ] || install locales
    log "making the de_DE.UTF-8 locale"
    as_root localedef -i de_DE -c -f UTF-8 -A /usr/share/locale/locale.alias de_DE.UTF-8
  fi
  log "de_DE.UTF-8 locale ready"
}

# versitygw is only built: the tests that need it run private ones
# (testsupport/s3test). Built once per machine into the user's cache from
# the Go module proxy, so the first test run does not spend a minute on it.
s3gateway() {
  log "versitygw ready: $(cd "$(dirname "$0")/.." && go run ./testsupport/s3test/prebuild)"
}

german
postgres
redis
rabbitmq
nodejs
browser
balancer
ha
pooler
s3gateway
