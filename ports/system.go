package ports

import (
	"time"

	"github.com/google/uuid"
)

// Clock tells the time; tests move it.
type Clock interface {
	Now() time.Time
}

// IDGenerator makes new ids (time-ordered, so indexes stay compact).
type IDGenerator interface {
	NewID() uuid.UUID
}

// CredentialSealer encrypts secrets at rest.
type CredentialSealer interface {
	// Seal encrypts plaintext, binding it to aad (for example the store and
	// workspace ids) so a ciphertext cannot be moved to another row.
	Seal(plaintext, aad []byte) ([]byte, error)
	// Open decrypts; an error if the ciphertext, key or aad do not match.
	Open(ciphertext, aad []byte) ([]byte, error)
}
