package media

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/oncehq/once/domain"
)

// Limits of an upload.
const (
	// MaxSizeBytes is the largest file accepted: 20 MiB.
	MaxSizeBytes = 20 << 20
	// MaxFilenameLength bounds the client's file name, in characters.
	MaxFilenameLength = 255
)

// ContentTypes are the accepted content types, each with the name the
// standard library's image decoders give the format.
var ContentTypes = map[string]string{
	"image/png":  "png",
	"image/jpeg": "jpeg",
}

// Registration announces an upload: what the client will send.
type Registration struct {
	Filename    string
	ContentType string
	SizeBytes   int64
	// SHA256 is the content's hex digest; optional for uploads through
	// the API, required for direct uploads (a store that pre-signs).
	SHA256 string
}

// normalize trims the file name and lower-cases the content type.
func (r Registration) normalize() Registration {
	r.Filename = strings.TrimSpace(r.Filename)
	r.ContentType = normalizeContentType(r.ContentType)
	r.SHA256 = strings.ToLower(strings.TrimSpace(r.SHA256))
	return r
}

// validate checks a normalized registration. Errors: domain.CodeValidation.
func (r Registration) validate() error {
	switch {
	case r.Filename == "":
		return domain.Errorf(domain.CodeValidation, "filename must not be empty")
	case !utf8.ValidString(r.Filename) || utf8.RuneCountInString(r.Filename) > MaxFilenameLength:
		return domain.Errorf(domain.CodeValidation, "filename must be at most %d characters of UTF-8", MaxFilenameLength)
	case strings.ContainsFunc(r.Filename, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return domain.Errorf(domain.CodeValidation, "filename must not contain control characters")
	case ContentTypes[r.ContentType] == "":
		return domain.Errorf(domain.CodeValidation, "content_type must be image/png or image/jpeg")
	case r.SizeBytes < 1 || r.SizeBytes > MaxSizeBytes:
		return domain.Errorf(domain.CodeValidation, "size_bytes must be between 1 and %d (20 MiB)", MaxSizeBytes)
	case r.SHA256 != "" && !isHexSHA256(r.SHA256):
		return domain.Errorf(domain.CodeValidation, "sha256 must be the content's SHA-256 as 64 hex digits")
	}
	return nil
}

// normalizeContentType lower-cases and trims a content type. Parameters are
// kept, so "image/png; x=y" is not an accepted type.
func normalizeContentType(ct string) string {
	return strings.ToLower(strings.TrimSpace(ct))
}

func isHexSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}
