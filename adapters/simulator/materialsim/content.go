package materialsim

import (
	"crypto/sha256"

	"github.com/oncehq/once/adapters/simulator/simpng"
)

// Content is the file the Sim serves for rawURL: a small PNG whose pixels
// are derived from a hash of the URL, so two URLs give two files and the
// same URL always the same bytes. Tests compare stored objects against it.
func Content(rawURL string) []byte {
	return simpng.Swatch(sha256.Sum256([]byte(rawURL)))
}
