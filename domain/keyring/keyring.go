// Package keyring reads the key lists of the configuration, written
// "id1:base64key,id2:base64key" with the key in use first and older keys,
// still accepted, after it. Naming keys is what makes rotation work: stored
// data says which key made it. Errors never contain key material.
package keyring

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// MaxIDLen bounds a key id.
const MaxIDLen = 64

// Key is one named key.
type Key struct {
	ID    string
	Bytes []byte
}

// Parse reads spec. what names the list in errors ("fingerprint secret").
// Keys may be standard or URL-safe base64, padded or not; whitespace around
// entries is ignored; ids must be unique. Lengths are the caller's rule.
func Parse(spec, what string) ([]Key, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("the %s list is empty", what)
	}
	var keys []Key
	seen := map[string]bool{}
	for i, entry := range strings.Split(spec, ",") {
		id, encoded, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok {
			return nil, fmt.Errorf("%s entry %d is not id:base64key", what, i)
		}
		if err := CheckID(id); err != nil {
			return nil, fmt.Errorf("%s entry %d: %w", what, i, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("%s id %q appears twice", what, id)
		}
		seen[id] = true
		key, err := decodeBase64(encoded)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not valid base64", what, id)
		}
		keys = append(keys, Key{ID: id, Bytes: key})
	}
	return keys, nil
}

// CheckID accepts ids of 1 to MaxIDLen URL-unreserved characters, safe to
// store beside data and to print.
func CheckID(id string) error {
	if id == "" {
		return errors.New("the key id is empty")
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("the key id is longer than %d characters", MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~'
		if !ok {
			return errors.New("the key id may hold only letters, digits, '-', '.', '_' and '~'")
		}
	}
	return nil
}

// decodeBase64 accepts standard or URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	var firstErr error
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
	} {
		b, err := enc.DecodeString(s)
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}
