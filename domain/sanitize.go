package domain

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxErrorLength bounds stored error text (outbox last_error, operation
// errors): enough to diagnose, too little to carry a dump.
const MaxErrorLength = 500

var (
	// URLs lose their query (pre-signed signatures live there) and userinfo.
	urlQuery    = regexp.MustCompile(`(?i)(https?://)([^/\s@]+@)?([^\s?#]+)\?[^\s]*`)
	bearerToken = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	jwtLike     = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
	keyValue    = regexp.MustCompile(`(?i)\b([a-z_-]*(password|passwd|secret|token|api[_-]?key|access[_-]?key|cookie|signature|authorization)[a-z_-]*)(["']?\s*[:=]\s*["']?)[^\s,;"'&}]+`)
	pemBlock    = regexp.MustCompile(`-----BEGIN [A-Z ]+-----[\s\S]*?(-----END [A-Z ]+-----|$)`)
	dsnPassword = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^:/\s@]+:)[^@\s]+@`)
)

// SanitizeError turns an error into text fit to store and show operators:
// secrets-looking parts redacted, control characters removed, bounded.
func SanitizeError(err error) string {
	if err == nil {
		return ""
	}
	return SanitizeText(err.Error())
}

// SanitizeText redacts and bounds s; see SanitizeError.
func SanitizeText(s string) string {
	s = pemBlock.ReplaceAllString(s, "[redacted key]")
	s = dsnPassword.ReplaceAllString(s, "${1}[redacted]@")
	s = urlQuery.ReplaceAllString(s, "${1}${3}?[redacted]")
	s = bearerToken.ReplaceAllString(s, "${1} [redacted]")
	s = jwtLike.ReplaceAllString(s, "[redacted token]")
	s = keyValue.ReplaceAllString(s, "${1}${3}[redacted]")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > MaxErrorLength {
		cut := MaxErrorLength
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
