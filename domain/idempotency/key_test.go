package idempotency

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
)

func TestParseKey(t *testing.T) {
	const canon = "8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a"
	cases := []struct {
		name   string
		header string
		want   string      // canonical key when accepted
		code   domain.Code // error code when refused
	}{
		{"bare", canon, canon, ""},
		{"upper case", strings.ToUpper(canon), canon, ""},
		{"quoted", `"` + canon + `"`, canon, ""},
		{"quoted upper", `"` + strings.ToUpper(canon) + `"`, canon, ""},
		{"padded bare", " \t" + canon + " ", canon, ""},
		{"padded quoted", `  "` + canon + `"  `, canon, ""},
		{"nil uuid", "00000000-0000-0000-0000-000000000000", "", domain.CodeIdempotencyKeyInvalid},
		{"quoted nil uuid", `"00000000-0000-0000-0000-000000000000"`, "", domain.CodeIdempotencyKeyInvalid},
		{"max uuid", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "", domain.CodeIdempotencyKeyInvalid},
		{"empty", "", "", domain.CodeIdempotencyKeyMissing},
		{"blank", "   \t ", "", domain.CodeIdempotencyKeyMissing},
		{"not a uuid", "hello", "", domain.CodeIdempotencyKeyInvalid},
		{"empty quotes", `""`, "", domain.CodeIdempotencyKeyInvalid},
		{"lone quote", `"`, "", domain.CodeIdempotencyKeyInvalid},
		{"open quote", `"` + canon, "", domain.CodeIdempotencyKeyInvalid},
		{"close quote", canon + `"`, "", domain.CodeIdempotencyKeyInvalid},
		{"double quoted", `""` + canon + `""`, "", domain.CodeIdempotencyKeyInvalid},
		{"space inside quotes", `" ` + canon + `"`, "", domain.CodeIdempotencyKeyInvalid},
		{"escape inside quotes", `"\` + canon[1:] + `"`, "", domain.CodeIdempotencyKeyInvalid},
		{"urn", "urn:uuid:" + canon, "", domain.CodeIdempotencyKeyInvalid},
		{"braced", "{" + canon + "}", "", domain.CodeIdempotencyKeyInvalid},
		{"no hyphens", strings.ReplaceAll(canon, "-", ""), "", domain.CodeIdempotencyKeyInvalid},
		{"misplaced hyphen", "8f42b1a63-c1e-4e7b-9d2a-5f0e6c7d8b9a", "", domain.CodeIdempotencyKeyInvalid},
		{"non-hex", "8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9g", "", domain.CodeIdempotencyKeyInvalid},
		{"too short", canon[:35], "", domain.CodeIdempotencyKeyInvalid},
		{"too long", canon + "0", "", domain.CodeIdempotencyKeyInvalid},
		{"over-long header", strings.Repeat(" ", 200) + canon, "", domain.CodeIdempotencyKeyInvalid},
		{"list of two", canon + ", " + canon, "", domain.CodeIdempotencyKeyInvalid},
		{"sf token", "?1", "", domain.CodeIdempotencyKeyInvalid},
		{"byte sequence", ":" + canon + ":", "", domain.CodeIdempotencyKeyInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, err := ParseKey(c.header)
			if c.code != "" {
				if !domain.IsCode(err, c.code) {
					t.Fatalf("ParseKey(%q) error = %v, want code %s", c.header, err, c.code)
				}
				if key != uuid.Nil {
					t.Fatalf("ParseKey(%q) = %s with an error, want uuid.Nil", c.header, key)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKey(%q): %v", c.header, err)
			}
			if key.String() != c.want {
				t.Fatalf("ParseKey(%q) = %s, want %s", c.header, key, c.want)
			}
		})
	}
}

func TestParseKeyRefusesTheNilUUIDSayingWhy(t *testing.T) {
	_, err := ParseKey(uuid.Nil.String())
	require.True(t, domain.IsCode(err, domain.CodeIdempotencyKeyInvalid), "%v", err)
	assert.Contains(t, err.Error(), "nil")
}

func TestParseKeyHeader(t *testing.T) {
	const canon = "8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a"
	key, err := ParseKeyHeader([]string{canon})
	require.NoError(t, err)
	assert.Equal(t, canon, key.String())

	_, err = ParseKeyHeader(nil)
	assert.True(t, domain.IsCode(err, domain.CodeIdempotencyKeyMissing), "%v", err)

	for name, values := range map[string][]string{
		"two different":  {canon, "0b8e6a52-0d7c-4b7e-8f6e-2a1d3c4b5a69"},
		"twice the same": {canon, canon},
		"one empty":      {canon, ""},
	} {
		t.Run(name, func(t *testing.T) {
			key, err := ParseKeyHeader(values)
			require.True(t, domain.IsCode(err, domain.CodeIdempotencyKeyInvalid), "%v", err)
			assert.Equal(t, uuid.Nil, key)
			assert.Contains(t, err.Error(), "sent 2 times; send it once")
			assert.NotContains(t, err.Error(), canon)
		})
	}
}

func TestParseKeyErrorDoesNotEchoHeader(t *testing.T) {
	const header = "secret-looking-not-a-uuid-value"
	_, err := ParseKey(header)
	if err == nil || strings.Contains(err.Error(), header) {
		t.Fatalf("error %v must exist and must not echo the header", err)
	}
}

func FuzzParseKey(f *testing.F) {
	for _, seed := range []string{
		"8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a",
		`"8F42B1A6-3C1E-4E7B-9D2A-5F0E6C7D8B9A"`,
		" 8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a\t",
		"urn:uuid:8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a",
		"{8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a}",
		`"`, `""`, "", "x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		key, err := ParseKey(header)
		if err != nil {
			code := domain.ErrorCode(err)
			if code != domain.CodeIdempotencyKeyMissing && code != domain.CodeIdempotencyKeyInvalid {
				t.Fatalf("ParseKey(%q): unexpected code %s", header, code)
			}
			return
		}
		canon := key.String()
		if canon != strings.ToLower(canon) {
			t.Fatalf("canonical form %q is not lower case", canon)
		}
		for _, spelling := range []string{canon, `"` + canon + `"`, strings.ToUpper(canon), ` "` + canon + `" `} {
			again, err := ParseKey(spelling)
			if err != nil {
				t.Fatalf("ParseKey(%q) accepted but ParseKey(%q) failed: %v", header, spelling, err)
			}
			if again != key {
				t.Fatalf("ParseKey(%q) = %s, ParseKey(%q) = %s", header, key, spelling, again)
			}
		}
	})
}
