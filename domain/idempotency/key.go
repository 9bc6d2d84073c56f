package idempotency

import (
	"strings"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// maxKeyHeaderLen bounds the header we look at. A quoted, padded UUID is far
// shorter; anything longer is refused before any parsing work.
const maxKeyHeaderLen = 128

// uuidTextLen is the length of the one textual form we accept:
// 8-4-4-4-12 hexadecimal digits (RFC 9562 section 4).
const uuidTextLen = 36

// ParseKey reads an Idempotency-Key header value. It accepts a bare UUID
// (8f42…) or the Structured Field string form of the IETF draft ("8f42…"),
// with surrounding whitespace. The UUID must be in its hyphenated 36-character
// form, in either case; URN, braced and hyphen-less forms are refused so that
// one key has one spelling. The result is the uuid value, whose String() is
// the canonical lower-case form.
//
// The nil UUID (all zeros) and the max UUID (all ones) are refused: they are
// sentinels, never generated, and a client sending one sends it for every
// request, so every request after the first would be a replay of it.
//
// Errors: domain.CodeIdempotencyKeyMissing when the header is empty,
// domain.CodeIdempotencyKeyInvalid otherwise. Messages say why, and never
// echo the header.
func ParseKey(header string) (uuid.UUID, error) {
	if len(header) > maxKeyHeaderLen {
		return uuid.Nil, invalidKey()
	}
	s := strings.TrimSpace(header)
	if s == "" {
		return uuid.Nil, domain.Errorf(domain.CodeIdempotencyKeyMissing,
			"the Idempotency-Key header is required; send a UUID")
	}
	if s[0] == '"' || s[len(s)-1] == '"' {
		// sf-string: DQUOTE *chars DQUOTE. A UUID needs no escapes, so a
		// backslash or any quote inside is simply not a UUID.
		if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
			return uuid.Nil, invalidKey()
		}
		s = s[1 : len(s)-1]
	}
	if len(s) != uuidTextLen {
		return uuid.Nil, invalidKey()
	}
	key, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, invalidKey()
	}
	if key == uuid.Nil || key == uuid.Max {
		return uuid.Nil, domain.Errorf(domain.CodeIdempotencyKeyInvalid,
			"the Idempotency-Key must not be the nil or max UUID (all zeros or all ones); generate a random UUID once per logical operation")
	}
	return key, nil
}

// ParseKeyHeader reads the Idempotency-Key from every value the request
// carries for it. The header must be sent once: two values (even equal
// ones) are refused rather than one picked, since a proxy or client that
// doubles the header may have merged two operations.
//
// Errors: as ParseKey; CodeIdempotencyKeyInvalid when there is more than
// one value.
func ParseKeyHeader(values []string) (uuid.UUID, error) {
	switch len(values) {
	case 0:
		return ParseKey("")
	case 1:
		return ParseKey(values[0])
	default:
		return uuid.Nil, domain.Errorf(domain.CodeIdempotencyKeyInvalid,
			"the Idempotency-Key header was sent %d times; send it once", len(values))
	}
}

func invalidKey() error {
	return domain.Errorf(domain.CodeIdempotencyKeyInvalid,
		`the Idempotency-Key header must be a UUID, bare or as a quoted string ("8f42…")`)
}
