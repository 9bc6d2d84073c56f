package objectstore

import (
	"strings"
	"unicode/utf8"

	"github.com/oncehq/once/domain"
)

// MaxKeyLength bounds a key in bytes (S3's limit).
const MaxKeyLength = 1024

// ValidateKey checks that key is a relative slash path that cannot escape a
// root directory or name an adapter's own files: not empty, at most
// MaxKeyLength bytes of UTF-8, no leading or trailing "/", no empty
// segment, no segment that starts with "." (so no "." or "..", and no
// hidden names, which adapters keep for themselves), no backslash, no NUL
// or other control character.
//
// Errors: domain.CodeValidation. The message never repeats the key: keys
// are internal and error messages can reach clients.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return invalidKey("it is empty")
	case len(key) > MaxKeyLength:
		return invalidKey("it is too long")
	case !utf8.ValidString(key):
		return invalidKey("it is not UTF-8")
	case strings.HasPrefix(key, "/"):
		return invalidKey("it is absolute")
	case strings.HasSuffix(key, "/"):
		return invalidKey("it ends with a slash")
	case strings.ContainsRune(key, '\\'):
		return invalidKey("it contains a backslash")
	case strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return invalidKey("it contains a control character")
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return invalidKey("it has an empty segment")
		case seg == "..":
			return invalidKey(`it has a ".." segment`)
		case strings.HasPrefix(seg, "."):
			return invalidKey(`a segment starts with "."`)
		}
	}
	return nil
}

func invalidKey(why string) error {
	return domain.Errorf(domain.CodeValidation, "invalid object key: %s", why)
}
