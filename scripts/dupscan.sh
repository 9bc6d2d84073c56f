#!/usr/bin/env bash
# The duplicate-code scan of the product code: the files git tracks, and new
# ones it does not ignore, tests (*_test.go), generated code (*.gen.go) and
# sdk/, mocks/, openapi/ and docs/ aside (test support, benches and
# simulators are code we keep, so they count), scanned by the `duplicates` tool,
# then the rows that pair code of two different task types printed on
# their own. Go import blocks are rewritten first as one `import "path"`
# line each, the block's own two lines left blank so line numbers stay
# true: the tool passes over import lines, as it documents, but reads the
# lines inside an `import ( ... )` block as code, so two files importing
# the same six packages would pair.
# Usage: scripts/dupscan.sh [duplicates options, e.g. --most 200]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v duplicates >/dev/null || { echo "dupscan: the duplicates tool is not on PATH" >&2; exit 2; }
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT

git ls-files -co --exclude-standard |
	grep -v -E '_test\.go$|\.gen\.go$|^(sdk|mocks|openapi|docs)/' |
	while read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
	tar -cf - -T - | tar -xf - -C "$tree"
find "$tree" -name '*.go' | while read -r f; do
	awk '
		/^import \($/ { inblock = 1; print ""; next }
		inblock && /^\)$/ { inblock = 0; print ""; next }
		inblock { if ($0 ~ /^[ \t]*$/) print; else { sub(/^[ \t]+/, ""); print "import " $0 }; next }
		{ print }' "$f" > "$f.flat" && mv "$f.flat" "$f"
done
(cd "$tree" && git init -q && git add -A &&
	git -c user.name=dupscan -c user.email=dupscan@localhost -c commit.gpgsign=false commit -qm scan)

out=$(cd "$tree" && duplicates --seconds 120 "$@")
printf '%s\n' "$out"

# Which task type a file belongs to: its domain package, HTTP routes,
# memory table and simulator.
printf '%s\n' "$out" | awk '
	function kind(f) {
		if (f ~ /domain\/ai\/|httpapi\/ai_tasks|memory\/ai\.go|aisim\//) return "ai task"
		if (f ~ /domain\/media\/|httpapi\/media\.go|memory\/media\.go/) return "media"
		if (f ~ /domain\/materials\/|httpapi\/material_transfers|memory\/material\.go|materialsim\//) return "material transfer"
		if (f ~ /domain\/publishing\/|httpapi\/publications|memory\/publications/) return "publication"
		if (f ~ /domain\/catalog\/|httpapi\/syncs|memory\/syncs/) return "catalog sync"
		if (f ~ /domain\/stores\/|httpapi\/stores|memory\/stores\.go/) return "verification"
		return ""
	}
	/^D[0-9]+ / {
		split($2, a, ":"); split($4, b, ":")
		ka = kind(a[1]); kb = kind(b[1])
		if (ka != "" && kb != "" && ka != kb) { rows = rows "\n" $0 "   [" ka " ~ " kb "]"; n++ }
	}
	END { printf "\ndupscan: %d row(s) pair two task types%s\n", n, rows }'
