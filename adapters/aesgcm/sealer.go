// Package aesgcm seals credentials at rest with AES-256-GCM under a keyring,
// implementing ports.CredentialSealer.
package aesgcm

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/keyring"
	"github.com/oncehq/once/ports"
)

var (
	_ ports.CredentialSealer = (*Sealer)(nil)
	_ ports.SealingKeys      = (*Sealer)(nil)
)

// KeyLen is the length of an AES-256 key in bytes.
const KeyLen = 32

// maxKeyIDLen keeps the id short: it is written into every ciphertext.
const maxKeyIDLen = 64

// formatV1 is the first byte of every ciphertext:
//
//	formatV1 | len(keyID) (1 byte) | keyID | nonce (12 bytes) | GCM ciphertext and tag
//
// The header (format, id length, id) is authenticated as part of the
// additional data, ahead of the caller's aad; it is length-prefixed, so the
// concatenation is unambiguous.
const formatV1 byte = 1

// Key is one AES-256 key of the keyring, named so that ciphertexts can say
// which key sealed them.
type Key struct {
	ID  string
	Key []byte
}

// Sealer encrypts with the first key of its keyring and decrypts with any of
// them, so keys rotate by putting a new key first and keeping the old ones
// until every row has been re-sealed.
type Sealer struct {
	currentID string
	aeads     map[string]cipher.AEAD
}

// NewSealer builds a Sealer. The first key seals; all keys open. It refuses an
// empty keyring, empty, over-long or duplicate ids, ids with characters other
// than letters, digits, '-', '.', '_' and '~', and keys that are not exactly
// 32 bytes.
func NewSealer(keys []Key) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("aesgcm: at least one key is required")
	}
	s := &Sealer{currentID: keys[0].ID, aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, k := range keys {
		if err := keyring.CheckID(k.ID); err != nil {
			return nil, fmt.Errorf("aesgcm: key %d: %w", i, err)
		}
		if _, dup := s.aeads[k.ID]; dup {
			return nil, fmt.Errorf("aesgcm: key id %q appears twice", k.ID)
		}
		if len(k.Key) != KeyLen {
			return nil, fmt.Errorf("aesgcm: key %q is %d bytes; AES-256 needs %d", k.ID, len(k.Key), KeyLen)
		}
		block, err := aes.NewCipher(k.Key)
		if err != nil {
			return nil, fmt.Errorf("aesgcm: key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("aesgcm: key %q: %w", k.ID, err)
		}
		s.aeads[k.ID] = aead
	}
	return s, nil
}

// ParseKeys reads a keyring written as "id1:base64key,id2:base64key" (the
// sealing key first). Keys may use standard or URL-safe base64, padded or not,
// and must decode to 32 bytes. Errors never contain key material.
func ParseKeys(spec string) ([]Key, error) {
	parsed, err := keyring.Parse(spec, "aesgcm key")
	if err != nil {
		return nil, err
	}
	keys := make([]Key, 0, len(parsed))
	for _, k := range parsed {
		if len(k.Bytes) != KeyLen {
			return nil, fmt.Errorf("aesgcm: key %q is %d bytes; AES-256 needs %d", k.ID, len(k.Bytes), KeyLen)
		}
		keys = append(keys, Key{ID: k.ID, Key: k.Bytes})
	}
	return keys, nil
}

// SealingKey implements ports.SealingKeys: the key Seal uses.
func (s *Sealer) SealingKey() string { return s.currentID }

// KeyOf implements ports.SealingKeys: the key id in ciphertext's header,
// and whether the keyring holds it. It opens nothing.
func (s *Sealer) KeyOf(ciphertext []byte) (string, bool, error) {
	header, _, err := splitHeader(ciphertext)
	if err != nil {
		return "", false, err
	}
	id := string(header[2:])
	_, held := s.aeads[id]
	return id, held, nil
}

// Seal encrypts plaintext under the current key with a fresh random nonce,
// binding it to aad.
func (s *Sealer) Seal(plaintext, aad []byte) ([]byte, error) {
	aead := s.aeads[s.currentID]
	header := make([]byte, 0, 2+len(s.currentID))
	header = append(header, formatV1, byte(len(s.currentID)))
	header = append(header, s.currentID...)

	out := make([]byte, len(header), len(header)+aead.NonceSize()+len(plaintext)+aead.Overhead())
	copy(out, header)
	nonce := out[len(header) : len(header)+aead.NonceSize()]
	out = out[:len(header)+aead.NonceSize()]
	if _, err := rand.Read(nonce); err != nil {
		return nil, domain.Wrap(domain.CodeInternal, err, "cannot draw a nonce")
	}
	return aead.Seal(out, nonce, plaintext, additionalData(header, aad)), nil
}

// Open decrypts a ciphertext made by Seal under any key of the keyring. It
// fails with domain.CodeInternal when the ciphertext is malformed or was
// tampered with, its key is not in the keyring, or aad differs.
func (s *Sealer) Open(ciphertext, aad []byte) ([]byte, error) {
	header, rest, err := splitHeader(ciphertext)
	if err != nil {
		return nil, err
	}
	aead, ok := s.aeads[string(header[2:])]
	if !ok {
		return nil, openError("sealed with a key that is not in the keyring")
	}
	if len(rest) < aead.NonceSize()+aead.Overhead() {
		return nil, openError("truncated ciphertext")
	}
	nonce, sealed := rest[:aead.NonceSize()], rest[aead.NonceSize():]
	plaintext, err := aead.Open(nil, nonce, sealed, additionalData(header, aad))
	if err != nil {
		return nil, openError("authentication failed (wrong key, aad or tampered ciphertext)")
	}
	return plaintext, nil
}

// splitHeader cuts ciphertext into its header (format, id length, key
// id) and the rest.
func splitHeader(ciphertext []byte) (header, rest []byte, err error) {
	if len(ciphertext) < 2 || ciphertext[0] != formatV1 {
		return nil, nil, openError("unknown ciphertext format")
	}
	idLen := int(ciphertext[1])
	if len(ciphertext) < 2+idLen {
		return nil, nil, openError("truncated ciphertext")
	}
	return ciphertext[:2+idLen], ciphertext[2+idLen:], nil
}

func additionalData(header, aad []byte) []byte {
	out := make([]byte, 0, len(header)+len(aad))
	return append(append(out, header...), aad...)
}

func openError(reason string) error {
	return domain.Wrap(domain.CodeInternal, errors.New("aesgcm: "+reason), "a sealed credential cannot be opened")
}
