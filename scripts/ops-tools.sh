#!/usr/bin/env bash
# Prints the path of a promtool to check and unit-test the alert rules in
# deploy/prometheus (make ops-rules). One on PATH is used as it is;
# otherwise it is taken from Debian's prometheus package, extracted into
# the user's cache rather than installed: installing the package would
# also install (and on some machines start) a Prometheus server, which the
# tests neither need nor should leave running. promtool is a static
# binary: the package's other files are not needed.
set -euo pipefail

log() { printf 'ops-tools: %s\n' "$*" >&2; }

if command -v promtool >/dev/null; then
  command -v promtool
  exit 0
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/once/promtool"
if [ -x "$cache/promtool" ]; then
  echo "$cache/promtool"
  exit 0
fi

command -v apt-get >/dev/null || { log "no promtool on PATH and no apt-get to fetch Debian's: install Prometheus's promtool"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch() { (cd "$tmp" && apt-get download prometheus >&2 2>"$tmp/err"); }
if ! fetch; then
  # A fresh machine has no package lists yet.
  log "apt-get update"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2; else sudo apt-get update -qq >&2; fi
  fetch || { cat "$tmp/err" >&2; exit 1; }
fi
dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
mkdir -p "$cache"
cp "$tmp/x/usr/bin/promtool" "$cache/promtool.new"
mv "$cache/promtool.new" "$cache/promtool"
log "promtool from Debian's prometheus package: $("$cache/promtool" --version 2>&1 | head -n1)"
echo "$cache/promtool"
