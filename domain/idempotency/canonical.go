package idempotency

import (
	"github.com/gowebpki/jcs"

	"github.com/oncehq/once/domain"
)

// CanonicalJSON returns body in the JSON Canonicalization Scheme (RFC 8785):
// object members sorted, insignificant whitespace removed, numbers and
// strings in one spelling. Two bodies that a JSON decoder reads as the same
// value give the same bytes, so a retry that re-serializes its body still
// matches. An empty body stays empty.
//
// Invalid JSON, duplicate member names and numbers outside IEEE 754 double
// range are domain.CodeValidation. The parser's message is dropped rather
// than wrapped: it may quote part of the body, and bodies can hold
// credentials.
func CanonicalJSON(body []byte) ([]byte, error) {
	if len(body) == 0 {
		return []byte{}, nil
	}
	out, err := jcs.Transform(body)
	if err != nil {
		return nil, domain.Errorf(domain.CodeValidation, "the request body is not valid JSON")
	}
	return out, nil
}
