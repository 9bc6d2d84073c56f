package idempotency

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"mime"
	"strings"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/keyring"
)

// MinSecretLen is the shortest fingerprint secret accepted, in bytes: a
// shorter key would make HMAC-SHA256 weaker than its 256-bit output.
const MinSecretLen = 32

// fingerprintVersion tags the encoding below. Changing what is fingerprinted
// or how means a new tag, so old and new fingerprints can never collide.
const fingerprintVersion = "once/idempotency-fingerprint/v1"

// Secret is one server key for request fingerprints. ID is stored next to
// each fingerprint so that the key can be found again after rotation.
type Secret struct {
	ID  string
	Key []byte
}

// RequestShape is what of a request decides whether a retry is "the same
// request": everything that changes its meaning except the scope's user and
// workspace.
type RequestShape struct {
	Method      string
	Path        string // escaped path as sent; normalized here
	Query       string // raw query as sent; canonicalized here
	ContentType string
	IfMatch     string
	Body        []byte
}

// Fingerprinter makes and checks request fingerprints: HMAC-SHA256 under a
// server secret over a canonical encoding of the request, so that the store
// never holds the body nor a plain hash that could be guessed from it.
type Fingerprinter struct {
	current Secret
	byID    map[string][]byte
}

// NewFingerprinter builds a Fingerprinter from a keyring. The first secret is
// current and makes new fingerprints; the rest are previous secrets that
// still verify fingerprints made before a rotation, so that in-flight retries
// are not mistaken for reused keys. It refuses an empty keyring, empty or
// duplicate ids, ids that ParseSecrets could not read back, and keys shorter
// than MinSecretLen bytes. The keys are copied.
func NewFingerprinter(secrets []Secret) (*Fingerprinter, error) {
	if len(secrets) == 0 {
		return nil, errors.New("idempotency: at least one fingerprint secret is required")
	}
	f := &Fingerprinter{byID: make(map[string][]byte, len(secrets))}
	for i, s := range secrets {
		if err := keyring.CheckID(s.ID); err != nil {
			return nil, fmt.Errorf("idempotency: fingerprint secret %d: %w", i, err)
		}
		if _, dup := f.byID[s.ID]; dup {
			return nil, fmt.Errorf("idempotency: fingerprint secret id %q appears twice", s.ID)
		}
		if len(s.Key) < MinSecretLen {
			return nil, fmt.Errorf("idempotency: fingerprint secret %q is %d bytes; at least %d are required",
				s.ID, len(s.Key), MinSecretLen)
		}
		key := append([]byte(nil), s.Key...)
		f.byID[s.ID] = key
		if i == 0 {
			f.current = Secret{ID: s.ID, Key: key}
		}
	}
	return f, nil
}

// ParseSecrets reads a keyring written as "id1:base64key,id2:base64key"
// (current first). Keys may use standard or URL-safe base64, padded or not.
// Whitespace around entries is ignored. Lengths are checked by
// NewFingerprinter. Errors never contain key material.
func ParseSecrets(spec string) ([]Secret, error) {
	keys, err := keyring.Parse(spec, "fingerprint secret")
	if err != nil {
		return nil, fmt.Errorf("idempotency: %w", err)
	}
	secrets := make([]Secret, 0, len(keys))
	for _, k := range keys {
		secrets = append(secrets, Secret{ID: k.ID, Key: k.Bytes})
	}
	return secrets, nil
}

// CurrentKeyID names the secret that Fingerprint uses.
func (f *Fingerprinter) CurrentKeyID() string { return f.current.ID }

// Fingerprint returns the id of the current secret and the HMAC of r under
// it. Store both. Errors carry domain.CodeValidation (a path, query,
// Content-Type or JSON body that cannot be canonicalized).
func (f *Fingerprinter) Fingerprint(r RequestShape) (keyID string, sum []byte, err error) {
	sum, err = fingerprint(f.current.Key, r)
	if err != nil {
		return "", nil, err
	}
	return f.current.ID, sum, nil
}

// Matches reports whether sum is the fingerprint of r under the secret named
// keyID, current or previous, comparing in constant time. An unknown keyID
// (a secret retired from the keyring) is false, not an error. Errors are
// those of Fingerprint.
func (f *Fingerprinter) Matches(r RequestShape, keyID string, sum []byte) (bool, error) {
	key, ok := f.byID[keyID]
	if !ok {
		return false, nil
	}
	want, err := fingerprint(key, r)
	if err != nil {
		return false, err
	}
	return hmac.Equal(want, sum), nil
}

func fingerprint(key []byte, r RequestShape) ([]byte, error) {
	path, err := NormalizePath(r.Path)
	if err != nil {
		return nil, err
	}
	query, err := CanonicalQuery(r.Query)
	if err != nil {
		return nil, err
	}
	contentType, isJSON, err := normalizeContentType(r.ContentType)
	if err != nil {
		return nil, err
	}
	body := r.Body
	if isJSON {
		if body, err = CanonicalJSON(r.Body); err != nil {
			return nil, err
		}
	}
	mac := hmac.New(sha256.New, key)
	for _, field := range [][]byte{
		[]byte(fingerprintVersion),
		[]byte(r.Method),
		[]byte(path),
		[]byte(query),
		[]byte(contentType),
		[]byte(strings.TrimSpace(r.IfMatch)),
		body,
	} {
		writeField(mac, field)
	}
	return mac.Sum(nil), nil
}

// writeField writes a length-prefixed field, so that no two sequences of
// fields encode to the same bytes.
func writeField(h hash.Hash, field []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(field)))
	h.Write(n[:])
	h.Write(field)
}

// normalizeContentType returns the media type with a lower-case type and
// sorted, lower-case parameter names (and a lower-case charset, which is
// case-insensitive), and whether it is JSON (application/json or a +json
// suffix). Empty stays empty.
func normalizeContentType(ct string) (string, bool, error) {
	if strings.TrimSpace(ct) == "" {
		return "", false, nil
	}
	mediaType, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", false, domain.Errorf(domain.CodeValidation, "the Content-Type header is not a valid media type")
	}
	if cs, ok := params["charset"]; ok {
		params["charset"] = strings.ToLower(cs)
	}
	normalized := mime.FormatMediaType(mediaType, params)
	if normalized == "" {
		return "", false, domain.Errorf(domain.CodeValidation, "the Content-Type header is not a valid media type")
	}
	isJSON := mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
	return normalized, isJSON, nil
}
