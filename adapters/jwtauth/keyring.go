package jwtauth

import (
	"errors"
	"fmt"
	"strings"
)

// Secret is one HS256 key of a Keyring, named by the "kid" its tokens carry.
type Secret struct {
	ID  string
	Key []byte
}

// Keyring holds the HS256 secrets: the first signs, all verify, so a new
// secret can be configured everywhere before it signs, and an old one
// removed only once its tokens have expired (docs/operating.md, "Rotating
// the token secret").
type Keyring struct {
	secrets []Secret
}

// NewKeyring builds a keyring of at least one secret, each at least
// MinSecretLen bytes. With several, each needs a distinct, non-empty id; a
// ring of one may leave it empty (ONCE_JWT_SECRET: its tokens carry no kid,
// as before keyrings).
func NewKeyring(secrets ...Secret) (*Keyring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("jwtauth: the keyring is empty")
	}
	seen := make(map[string]bool, len(secrets))
	ring := &Keyring{}
	for _, s := range secrets {
		if len(s.Key) < MinSecretLen {
			return nil, fmt.Errorf("jwtauth: the secret %q is %d bytes; at least %d are required", s.ID, len(s.Key), MinSecretLen)
		}
		if len(secrets) > 1 && s.ID == "" {
			return nil, errors.New("jwtauth: in a keyring of several secrets each needs an id")
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("jwtauth: the secret id %q appears twice", s.ID)
		}
		seen[s.ID] = true
		ring.secrets = append(ring.secrets, Secret{ID: s.ID, Key: clone(s.Key)})
	}
	return ring, nil
}

// ParseSecrets reads "kid:secret[,kid:secret...]": the secret is the text
// after the first colon, used as it is (as ONCE_JWT_SECRET is), so it cannot
// hold a comma.
func ParseSecrets(value string) ([]Secret, error) {
	var secrets []Secret
	for entry := range strings.SplitSeq(value, ",") {
		id, key, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok || id == "" || key == "" {
			return nil, errors.New("each entry is kid:secret")
		}
		secrets = append(secrets, Secret{ID: id, Key: []byte(key)})
	}
	if _, err := NewKeyring(secrets...); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "jwtauth: "))
	}
	return secrets, nil
}

// signing is the secret that signs new tokens.
func (k *Keyring) signing() Secret { return k.secrets[0] }

// verifying is the key for a token with kid (hasKID), or, for a token
// without one (signed by ONCE_JWT_SECRET), every key: an HMAC check is
// cheap and the ring is short. A ring of one secret without an id
// (ONCE_JWT_SECRET) takes any kid: it runs beside the first step of a
// rotation, whose tokens name the same secret by its new id.
func (k *Keyring) verifying(kid string, hasKID bool) (any, bool) {
	if !hasKID {
		keys := make([]any, len(k.secrets))
		for i, s := range k.secrets {
			keys[i] = s.Key
		}
		return verificationKeys(keys), true
	}
	for _, s := range k.secrets {
		if s.ID == kid || s.ID == "" {
			return s.Key, true
		}
	}
	return nil, false
}

// Has reports whether key is one of the ring's secrets (the operator
// credential must differ from all of them).
func (k *Keyring) Has(key []byte) bool {
	for _, s := range k.secrets {
		if string(s.Key) == string(key) {
			return true
		}
	}
	return false
}
