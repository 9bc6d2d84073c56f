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
	// Internal addresses say where a broker or a database lives: IP
	// literals (with or without a port), and host:port where the network
	// or the context names one ("dial tcp redis.internal:6379", "lookup
	// redis.internal", "unreachable at mq:5672").
	ipAddress    = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b|\[[0-9A-Fa-f:.%]+\](?::\d{1,5})?`)
	namedAddress = regexp.MustCompile(`(?i)\b(tcp[46]?|udp[46]?|at|lookup|to|on)\s+[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?:\d{1,5}\b`)
	lookupHost   = regexp.MustCompile(`(?i)\b(lookup)\s+[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?\b`)
)

// redactedAddress replaces an internal address.
const redactedAddress = "[address]"

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
	s = ipAddress.ReplaceAllString(s, redactedAddress)
	s = namedAddress.ReplaceAllString(s, "${1} "+redactedAddress)
	s = lookupHost.ReplaceAllString(s, "${1} "+redactedAddress)
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
