package aesgcm

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/oncehq/once/domain"
)

func key(id string, fill byte) Key { return Key{ID: id, Key: bytes.Repeat([]byte{fill}, KeyLen)} }

func newSealer(t *testing.T, keys ...Key) *Sealer {
	t.Helper()
	s, err := NewSealer(keys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	secret = []byte("sk_live_51HxYzABCDEFGHIJKLMNOP")
	aad    = []byte("store:0d7c1c7e/workspace:9a1b")
)

func TestRoundTrip(t *testing.T) {
	s := newSealer(t, key("k1", 1))
	for _, plaintext := range [][]byte{secret, {}, nil, bytes.Repeat([]byte("x"), 10_000)} {
		ct, err := s.Seal(plaintext, aad)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Open(ct, aad)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, plaintext) {
			t.Fatalf("Open = %q, want %q", got, plaintext)
		}
	}
	// nil and empty aad are the same binding.
	ct, _ := s.Seal(secret, nil)
	if _, err := s.Open(ct, []byte{}); err != nil {
		t.Fatalf("nil aad sealed, empty aad open: %v", err)
	}
}

func TestNoncesAreFresh(t *testing.T) {
	s := newSealer(t, key("k1", 1))
	a, _ := s.Seal(secret, aad)
	b, _ := s.Seal(secret, aad)
	if bytes.Equal(a, b) {
		t.Fatal("sealing twice gave the same ciphertext")
	}
}

func TestCiphertextHidesPlaintext(t *testing.T) {
	s := newSealer(t, key("k1", 1))
	ct, _ := s.Seal(secret, aad)
	if bytes.Contains(ct, secret) || bytes.Contains(ct, secret[:8]) {
		t.Fatal("the ciphertext contains the plaintext")
	}
	if bytes.Contains(ct, aad) {
		t.Fatal("the ciphertext carries the aad; it should only be bound")
	}
}

func TestWrongAADFails(t *testing.T) {
	s := newSealer(t, key("k1", 1))
	ct, _ := s.Seal(secret, aad)
	for _, other := range [][]byte{nil, []byte("store:other/workspace:9a1b"), append(append([]byte{}, aad...), 0)} {
		if _, err := s.Open(ct, other); !domain.IsCode(err, domain.CodeInternal) {
			t.Fatalf("Open with aad %q: err = %v, want %s", other, err, domain.CodeInternal)
		}
	}
}

func TestTamperedCiphertextFails(t *testing.T) {
	s := newSealer(t, key("k1", 1), key("k2", 2))
	ct, _ := s.Seal(secret, aad)
	for i := range ct {
		for _, flip := range []byte{0x01, 0x80} {
			bad := append([]byte{}, ct...)
			bad[i] ^= flip
			if got, err := s.Open(bad, aad); err == nil {
				t.Fatalf("flipping byte %d opened to %q", i, got)
			}
		}
	}
	for n := 0; n < len(ct); n++ {
		if _, err := s.Open(ct[:n], aad); err == nil {
			t.Fatalf("a ciphertext truncated to %d bytes opened", n)
		}
	}
	if _, err := s.Open(append(append([]byte{}, ct...), 0), aad); err == nil {
		t.Fatal("a ciphertext with a trailing byte opened")
	}
}

func TestRotation(t *testing.T) {
	old := newSealer(t, key("2025-01", 1))
	ct, err := old.Seal(secret, aad)
	if err != nil {
		t.Fatal(err)
	}

	rotated := newSealer(t, key("2025-07", 2), key("2025-01", 1))
	got, err := rotated.Open(ct, aad)
	if err != nil {
		t.Fatalf("after rotation, an old ciphertext does not open: %v", err)
	}
	if !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q", got)
	}
	fresh, _ := rotated.Seal(secret, aad)
	if _, err := old.Open(fresh, aad); err == nil {
		t.Fatal("a ciphertext sealed with the new key opened without it")
	}
	if rotated.SealingKey() != "2025-07" {
		t.Fatalf("current key = %q", rotated.SealingKey())
	}

	// The same id with a different key must not open.
	impostor := newSealer(t, key("2025-01", 9))
	if _, err := impostor.Open(ct, aad); err == nil {
		t.Fatal("opened with the wrong key under the right id")
	}
}

func TestNewSealerRefuses(t *testing.T) {
	cases := map[string][]Key{
		"none":         nil,
		"empty id":     {key("", 1)},
		"bad id":       {key("a:b", 1)},
		"long id":      {key(strings.Repeat("k", 65), 1)},
		"duplicate id": {key("k", 1), key("k", 2)},
		"short key":    {{ID: "k", Key: make([]byte, 16)}},
		"long key":     {{ID: "k", Key: make([]byte, 33)}},
	}
	for name, keys := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := NewSealer(keys); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestParseKeys(t *testing.T) {
	raw := bytes.Repeat([]byte{0xfb, 0xff}, KeyLen/2)
	keys, err := ParseKeys("new:" + base64.StdEncoding.EncodeToString(raw) + " , old:" + base64.RawURLEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].ID != "new" || keys[1].ID != "old" ||
		!bytes.Equal(keys[0].Key, raw) || !bytes.Equal(keys[1].Key, raw) {
		t.Fatalf("ParseKeys = %+v", keys)
	}
	if _, err := NewSealer(keys); err != nil {
		t.Fatal(err)
	}
}

func TestParseKeysRefuses(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, KeyLen))
	short := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 16))
	for _, spec := range []string{"", good, ":" + good, "k:" + short, "k:***", "k:" + good + ",", "a b:" + good} {
		t.Run(spec, func(t *testing.T) {
			_, err := ParseKeys(spec)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), good) || strings.Contains(err.Error(), short) {
				t.Fatalf("error %q echoes key material", err)
			}
		})
	}
}
