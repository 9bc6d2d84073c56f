package postgres

import (
	"regexp"
	"strconv"
	"strings"
)

// The statements sent to pgx with parameters are written once, in bun's
// placeholders, and numbered for pgx here, so the two forms cannot drift
// apart.

var bunPositional = regexp.MustCompile(`\?(\d+)`)

// numberedPlaceholders turns bun's ? placeholders, in order, into $1,
// $2...: for a statement whose text has no other question mark (no jsonb
// ? operator, none in a literal).
func numberedPlaceholders(query string) string {
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteString("$" + strconv.Itoa(n))
	}
	return b.String()
}

// pgxPlaceholders turns bun's positional ?N (from 0) into $N+1.
func pgxPlaceholders(query string) string {
	return bunPositional.ReplaceAllStringFunc(query, func(m string) string {
		n, _ := strconv.Atoi(m[1:])
		return "$" + strconv.Itoa(n+1)
	})
}
