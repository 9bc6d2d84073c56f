package idempotency

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/google/uuid"
)

// logKeyLen is how many hex digits of the hash a log line carries: enough to
// correlate the lines of one request, too few to serve as the key itself.
const logKeyLen = 12

// LogKey returns a short, non-reversible tag for key, for logs. Keys appear in
// logs only in this form: a raw key in a log would let anyone who reads the
// logs replay a client's request outcome.
func LogKey(key uuid.UUID) string {
	sum := sha256.Sum256([]byte(key.String()))
	return hex.EncodeToString(sum[:])[:logKeyLen]
}
