package idempotency

import (
	"net/url"
	"sort"
	"strings"

	"github.com/oncehq/once/domain"
)

// NormalizePath returns the concrete request path in the one form that
// scopes an idempotency key, so that spellings a router treats alike share a
// key:
//
//   - percent-encoding normalized (RFC 3986 section 6.2.2.2): escapes of
//     unreserved characters are decoded, other escapes get upper-case hex,
//     and bytes that may not appear raw in a path are escaped;
//   - duplicate slashes collapsed and dot segments removed (as path.Clean
//     does, after decoding, so %2E%2E counts as ".."; ".." never climbs
//     above the root);
//   - no trailing slash, except for the root "/".
//
// An encoded slash (%2F) stays encoded: it is data, not a separator.
// escapedPath is the path as sent (url.URL.EscapedPath). It must start with
// "/". Errors carry domain.CodeValidation.
func NormalizePath(escapedPath string) (string, error) {
	if !strings.HasPrefix(escapedPath, "/") {
		return "", domain.Errorf(domain.CodeValidation, "the request path must start with /")
	}
	segments := strings.Split(escapedPath, "/")
	out := make([]string, 0, len(segments))
	for _, raw := range segments {
		seg, err := normalizeEscapes(raw, isPathChar)
		if err != nil {
			return "", err
		}
		switch seg {
		case "", ".":
			// duplicate slash, trailing slash, or "this directory"
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/"), nil
}

// CanonicalQuery returns rawQuery in one form for fingerprinting: each
// parameter decoded as application/x-www-form-urlencoded (as
// url.URL.Query does, so "+" and "%20" are both a space), re-encoded with
// url.QueryEscape, and sorted by key then value, so that "b=2&a=1" and
// "a=1&b=2" are equal. A parameter without "=" equals one with an empty
// value, empty parameters ("a=1&&b=2") are dropped, and ";" is an ordinary
// character. An empty query stays empty. Invalid escapes are
// domain.CodeValidation.
func CanonicalQuery(rawQuery string) (string, error) {
	if rawQuery == "" {
		return "", nil
	}
	type param struct{ key, value string }
	var params []param
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			return "", invalidQuery()
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return "", invalidQuery()
		}
		params = append(params, param{key, value})
	}
	sort.Slice(params, func(i, j int) bool {
		if params[i].key != params[j].key {
			return params[i].key < params[j].key
		}
		return params[i].value < params[j].value
	})
	var b strings.Builder
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.value))
	}
	return b.String(), nil
}

func invalidQuery() error {
	return domain.Errorf(domain.CodeValidation, "the query string has an invalid percent-encoding")
}

// normalizeEscapes rewrites s so that every escape is valid, escapes of
// unreserved characters are decoded, the remaining escapes use upper-case
// hex, and raw bytes for which allowedRaw is false are escaped.
func normalizeEscapes(s string, allowedRaw func(byte) bool) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", domain.Errorf(domain.CodeValidation, "the request path has an invalid percent-encoding")
			}
			decoded := unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			if isUnreserved(decoded) {
				b.WriteByte(decoded)
			} else {
				writeEscape(&b, decoded)
			}
			continue
		}
		if allowedRaw(c) {
			b.WriteByte(c)
		} else {
			writeEscape(&b, c)
		}
	}
	return b.String(), nil
}

const upperHex = "0123456789ABCDEF"

func writeEscape(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&0x0F])
}

// isUnreserved: ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 section 2.3).
func isUnreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '-' || c == '.' || c == '_' || c == '~'
}

// isPathChar reports whether c may appear raw in a path segment:
// pchar = unreserved / sub-delims / ":" / "@" (RFC 3986 section 3.3).
// "/" never reaches here: segments are split on it first.
func isPathChar(c byte) bool {
	if isUnreserved(c) {
		return true
	}
	return strings.IndexByte("!$&'()*+,;=:@", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
