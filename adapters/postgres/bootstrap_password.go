package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// scramIterations is PostgreSQL's own default (scram_iterations) for the
// verifiers it makes.
const scramIterations = 4096

// setPassword gives role password. The server is sent a SCRAM-SHA-256
// verifier made here, as psql's \password does, never the password: a
// statement can end up in the server's log (log_statement,
// log_min_error_statement) or pg_stat_statements, and a verifier there
// does not let anyone log in.
func (b bootstrapper) setPassword(ctx context.Context, role, password string) error {
	verifier, err := scramVerifier(password)
	if err != nil {
		return fmt.Errorf("password of %s: %w", role, err)
	}
	// The verifier is base64, digits, '$' and ':': nothing to escape in a
	// literal (ALTER ROLE takes no parameters).
	if err := b.exec(ctx, `ALTER ROLE `+quoteIdent(role)+` PASSWORD '`+verifier+`'`); err != nil {
		return fmt.Errorf("set the password of %s: %w", role, err)
	}
	return nil
}

// scramVerifier is the SCRAM-SHA-256 verifier of password (RFC 5802,
// RFC 7677) in PostgreSQL's form:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>. The password
// is used as its bytes: PostgreSQL prepares it with SASLprep, which leaves
// printable ASCII as it is, so other characters are refused rather than
// risk a verifier the server's login would not match.
func scramVerifier(password string) (string, error) {
	if password == "" {
		return "", errors.New("empty password")
	}
	for _, r := range password {
		if r < 0x20 || r > 0x7e {
			return "", errors.New("use printable ASCII characters only")
		}
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return "", err
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", scramIterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key"))), nil
}
