package apikeys

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"regexp"
	"strings"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/keyring"
)

// The form of an API key's secret, so a secret scanner (GitHub's, a
// gitleaks rule) finds a leaked one by SecretPattern alone:
//
//	once_sk_<lookup id: 12 of [0-9a-z]>_<secret: 43 of [0-9A-Za-z]>
//
// 64 characters in all. The lookup id finds the key's row (it is shown in
// lists, with the prefix, as the key's "prefix"); the 43 random base62
// characters carry 256 bits, the part only the holder knows.
const (
	Prefix      = "once_sk_"
	lookupLen   = 12
	randomLen   = 43
	secretLen   = len(Prefix) + lookupLen + 1 + randomLen
	lookupChars = "0123456789abcdefghijklmnopqrstuvwxyz"
	randomChars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// SecretPattern matches an API key's secret anywhere in a text
// (docs/api.md#api-keys gives it to secret scanners).
var SecretPattern = regexp.MustCompile(`once_sk_[0-9a-z]{12}_[0-9A-Za-z]{43}`)

// IsKey says whether a bearer token is meant as an API key (it starts
// with Prefix), whether or not it is well formed: such a token is never
// a JWT, so authentication must not try it as one.
func IsKey(token string) bool { return strings.HasPrefix(token, Prefix) }

// newSecret returns a new secret and its lookup id.
func newSecret() (secret, lookupID string, err error) {
	lookup, err := randomString(lookupChars, lookupLen)
	if err != nil {
		return "", "", err
	}
	random, err := randomString(randomChars, randomLen)
	if err != nil {
		return "", "", err
	}
	return Prefix + lookup + "_" + random, lookup, nil
}

// randomString draws n characters of alphabet uniformly (rejection
// sampling: no character is likelier than another).
func randomString(alphabet string, n int) (string, error) {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", domain.Wrap(domain.CodeInternal, err, "an API key cannot be generated")
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}

// parseSecret returns the lookup id of a well-formed secret.
func parseSecret(secret string) (string, bool) {
	if len(secret) != secretLen || !IsKey(secret) || secret[len(Prefix)+lookupLen] != '_' {
		return "", false
	}
	lookup := secret[len(Prefix) : len(Prefix)+lookupLen]
	if !only(lookup, lookupChars) || !only(secret[len(Prefix)+lookupLen+1:], randomChars) {
		return "", false
	}
	return lookup, true
}

func only(s, alphabet string) bool {
	for i := range len(s) {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// hashLabel is the HKDF info that derives the API-key hashing keys from
// the keyring's keys: the keys of ONCE_IDEMPOTENCY_SECRETS sign request
// fingerprints, and a key derived under a label of its own never makes
// the same MAC as its parent, whatever either hashes.
const hashLabel = "once api key hash v1"

// Hasher makes and checks the keyed hashes of API keys. It takes the
// deployment's HMAC keyring (ONCE_IDEMPOTENCY_SECRETS: the first key
// hashes new keys, every key checks those made under it, so a rotation
// keeps keys working), each key derived for this use with HKDF.
//
// Why that keyring and not a setting of its own: it is already required
// wherever the API is served, it is made of HMAC keys with ids (stored
// beside the hash, which is what rotation needs), and it is rotated the
// same way; a new required secret would break every deployment at
// upgrade for no gain in separation that the HKDF label does not give.
// A key hashed under an older keyring key moves to the current one the
// next time it is used (docs/configuration.md).
type Hasher struct {
	keys []derivedKey // the first hashes new secrets
}

type derivedKey struct {
	id  string
	key []byte
}

// NewHasher derives the hashing keys of keys (at least one).
func NewHasher(keys []keyring.Key) (*Hasher, error) {
	if len(keys) == 0 {
		return nil, errors.New("apikeys: the keyring is empty")
	}
	h := &Hasher{}
	for _, k := range keys {
		d, err := hkdf.Key(sha256.New, k.Bytes, nil, hashLabel, sha256.Size)
		if err != nil {
			return nil, err
		}
		h.keys = append(h.keys, derivedKey{k.ID, d})
	}
	return h, nil
}

// CurrentKeyID names the key new secrets are hashed under.
func (h *Hasher) CurrentKeyID() string { return h.keys[0].id }

// hash returns the id of the current key and secret's hash under it.
func (h *Hasher) hash(secret string) (string, []byte) {
	return h.keys[0].id, mac(h.keys[0].key, secret)
}

// matches says whether sum is secret's hash under the key keyID; false
// for a key the keyring no longer has.
func (h *Hasher) matches(keyID string, sum []byte, secret string) bool {
	for _, k := range h.keys {
		if k.id == keyID {
			return hmac.Equal(mac(k.key, secret), sum)
		}
	}
	return false
}

func mac(key []byte, secret string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(secret))
	return m.Sum(nil)
}
