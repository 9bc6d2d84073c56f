#!/usr/bin/env bash
# Runs `make release` and checks what it made: one binary per platform, each
# built for the platform its name says, SHA256SUMS listing exactly them with
# the right sums, and the version, commit and date stamped into them (the
# binary for this machine is run). Offline once the modules are in the
# module cache: cross-compiling pure Go needs nothing else. CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'release-check: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

version=v0.0.0-release-check
commit=$(git rev-parse HEAD)
date=2000-01-02T03:04:05Z
platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
make --no-print-directory release VERSION="$version" COMMIT="$commit" DATE="$date" PLATFORMS="$platforms" >&2

want_files=""
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  bin=dist/once-$version-$os-$arch
  [ -x "$bin" ] || fail "$bin is missing"
  want_files="$want_files once-$version-$os-$arch"
  # The toolchain's record of the build says the platform, whatever runs this.
  info=$(go version -m "$bin")
  grep -q "GOOS=$os\$" <<<"$info" || fail "$bin: not built for $os: $info"
  grep -q "GOARCH=$arch\$" <<<"$info" || fail "$bin: not built for $arch: $info"
  grep -q "CGO_ENABLED=0" <<<"$info" || fail "$bin: not static"
  if command -v file >/dev/null; then
    case $os/$arch in
      linux/amd64) want="ELF 64-bit.*x86-64" ;;
      linux/arm64) want="ELF 64-bit.*(aarch64|ARM aarch64)" ;;
      darwin/amd64) want="Mach-O 64-bit.*x86_64" ;;
      darwin/arm64) want="Mach-O 64-bit.*arm64" ;;
    esac
    file "$bin" | grep -Eq "$want" || fail "$bin: file says $(file -b "$bin")"
  fi
  log "$bin: $os/$arch"
done

[ -f dist/SHA256SUMS ] || fail "dist/SHA256SUMS is missing"
listed=$(awk '{print $2}' dist/SHA256SUMS | sort | xargs)
want_sorted=$(tr ' ' '\n' <<<"$want_files" | sed '/^$/d' | sort | xargs)
[ "$listed" = "$want_sorted" ] || fail "SHA256SUMS lists [$listed], want [$want_sorted]"
if command -v sha256sum >/dev/null; then
  (cd dist && sha256sum --quiet -c SHA256SUMS) || fail "a checksum does not match"
else
  (cd dist && shasum -a 256 -c SHA256SUMS >/dev/null) || fail "a checksum does not match"
fi
log "SHA256SUMS: $(wc -l <dist/SHA256SUMS) binaries, sums match"

host=dist/once-$version-$(go env GOOS)-$(go env GOARCH)
if [ -x "$host" ]; then
  for args in version --version; do
    out=$("$host" $args)
    want="once $version (commit $commit, built $date, "
    [[ $out == "$want"* ]] || fail "$host $args printed [$out], want [$want...]"
  done
  log "$host version: $out"
fi
log "ok"
