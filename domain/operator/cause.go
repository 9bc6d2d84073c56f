package operator

import (
	"regexp"
	"strings"
)

var (
	uuidPattern = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// Long hex runs with a digit in them: object keys, hashes, message ids.
	hexID = regexp.MustCompile(`(?i)\b[0-9a-f]*[0-9][0-9a-f]*\b`)
	// Numbers that are not three digits long: attempts, sizes, ports,
	// durations. Three digits are kept: HTTP statuses tell causes apart.
	number = regexp.MustCompile(`\d+`)
)

// Cause is the cause of a failure without what differs from one event to
// the next: ids become <id> and numbers <n> (but three-digit numbers, the
// HTTP statuses, are kept), so the dead letters that failed the same way
// fall in one group. lastError is already sanitized (domain.SanitizeText).
func Cause(lastError string) string {
	s := uuidPattern.ReplaceAllString(lastError, "<id>")
	s = hexID.ReplaceAllStringFunc(s, func(m string) string {
		if len(m) >= 16 {
			return "<id>"
		}
		return m
	})
	s = number.ReplaceAllStringFunc(s, func(m string) string {
		if len(m) == 3 {
			return m
		}
		return "<n>"
	})
	return strings.TrimSpace(s)
}

// GroupKey names a group of dead letters: the stage and the cause.
func GroupKey(stage, cause string) string { return stage + ": " + cause }
