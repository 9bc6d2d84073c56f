package idempotency

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/oncehq/once/domain"
)

func testKey(fill byte) []byte { return bytes.Repeat([]byte{fill}, MinSecretLen) }

func fuzzFingerprinter(tb testing.TB) *Fingerprinter {
	tb.Helper()
	fp, err := NewFingerprinter([]Secret{{ID: "k1", Key: testKey(1)}})
	if err != nil {
		tb.Fatal(err)
	}
	return fp
}

func TestNewFingerprinterRefuses(t *testing.T) {
	cases := []struct {
		name    string
		secrets []Secret
	}{
		{"nil", nil},
		{"empty", []Secret{}},
		{"empty id", []Secret{{ID: "", Key: testKey(1)}}},
		{"id with colon", []Secret{{ID: "a:b", Key: testKey(1)}}},
		{"id with comma", []Secret{{ID: "a,b", Key: testKey(1)}}},
		{"long id", []Secret{{ID: strings.Repeat("a", 65), Key: testKey(1)}}},
		{"duplicate id", []Secret{{ID: "k", Key: testKey(1)}, {ID: "k", Key: testKey(2)}}},
		{"short key", []Secret{{ID: "k", Key: testKey(1)[:31]}}},
		{"short previous key", []Secret{{ID: "k", Key: testKey(1)}, {ID: "old", Key: []byte("short")}}},
		{"empty key", []Secret{{ID: "k"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if f, err := NewFingerprinter(c.secrets); err == nil {
				t.Fatalf("NewFingerprinter accepted %v: %v", c.secrets, f)
			}
		})
	}
}

func TestNewFingerprinterCopiesKeys(t *testing.T) {
	key := testKey(1)
	f, err := NewFingerprinter([]Secret{{ID: "k", Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	_, before, _ := f.Fingerprint(jsonShape([]byte(`{}`)))
	key[0] ^= 0xFF
	_, after, _ := f.Fingerprint(jsonShape([]byte(`{}`)))
	if !bytes.Equal(before, after) {
		t.Fatal("changing the caller's key slice changed the fingerprints")
	}
}

func TestParseSecrets(t *testing.T) {
	raw := []byte{0xfb, 0xff, 0xfe, 0x01, 0x02, 0x03, 0x04}
	got, err := ParseSecrets(" new:" + base64.StdEncoding.EncodeToString(raw) +
		", old:" + base64.RawURLEncoding.EncodeToString(raw) +
		",older:" + base64.URLEncoding.EncodeToString(raw) +
		",oldest:" + base64.RawStdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{"new", "old", "older", "oldest"}
	if len(got) != len(wantIDs) {
		t.Fatalf("got %d secrets, want %d", len(got), len(wantIDs))
	}
	for i, s := range got {
		if s.ID != wantIDs[i] || !bytes.Equal(s.Key, raw) {
			t.Fatalf("secret %d = %q %x, want %q %x", i, s.ID, s.Key, wantIDs[i], raw)
		}
	}
}

func TestParseSecretsRefuses(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(testKey(7))
	for _, spec := range []string{
		"", "  ", key, ":" + key, "k:" + key + ",", "k:not base64!", "k:" + key + ",,j:" + key, "k k:" + key,
	} {
		t.Run(spec, func(t *testing.T) {
			_, err := ParseSecrets(spec)
			if err == nil {
				t.Fatalf("ParseSecrets(%q) accepted", spec)
			}
			if strings.Contains(err.Error(), key) {
				t.Fatalf("error %q echoes key material", err)
			}
		})
	}
}

func TestParseSecretsFeedsNewFingerprinter(t *testing.T) {
	secrets, err := ParseSecrets("cur:" + base64.StdEncoding.EncodeToString(testKey(1)) +
		",prev:" + base64.URLEncoding.EncodeToString(testKey(2)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFingerprinter(secrets)
	if err != nil {
		t.Fatal(err)
	}
	if f.CurrentKeyID() != "cur" {
		t.Fatalf("current = %q, want cur", f.CurrentKeyID())
	}
}

func TestFingerprintEqualRequests(t *testing.T) {
	f := fuzzFingerprinter(t)
	base := RequestShape{
		Method: "POST", Path: "/v1/stores", Query: "b=2&a=1",
		ContentType: "application/json; charset=utf-8", IfMatch: `"v3"`,
		Body: []byte(`{"name":"x","count":1}`),
	}
	same := []struct {
		name   string
		change func(*RequestShape)
	}{
		{"identical", func(r *RequestShape) {}},
		{"key order and whitespace", func(r *RequestShape) { r.Body = []byte("{ \"count\": 1.0,\n \"name\": \"x\" }") }},
		{"query order", func(r *RequestShape) { r.Query = "a=1&b=2" }},
		{"path spelling", func(r *RequestShape) { r.Path = "/v1//%73tores/" }},
		{"content type case and spacing", func(r *RequestShape) { r.ContentType = "Application/JSON;Charset=UTF-8" }},
		{"if-match padding", func(r *RequestShape) { r.IfMatch = `  "v3" ` }},
	}
	_, want, err := f.Fingerprint(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range same {
		t.Run(c.name, func(t *testing.T) {
			r := base
			c.change(&r)
			_, got, err := f.Fingerprint(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("fingerprints differ for the same request")
			}
			ok, err := f.Matches(r, "k1", want)
			if err != nil || !ok {
				t.Fatalf("Matches = %v, %v; want true", ok, err)
			}
		})
	}
}

func TestFingerprintDifferentRequests(t *testing.T) {
	f := fuzzFingerprinter(t)
	base := RequestShape{
		Method: "POST", Path: "/v1/stores", Query: "a=1",
		ContentType: "application/json", IfMatch: `"v3"`,
		Body: []byte(`{"name":"x"}`),
	}
	differ := []struct {
		name   string
		change func(*RequestShape)
	}{
		{"body value", func(r *RequestShape) { r.Body = []byte(`{"name":"y"}`) }},
		{"body type", func(r *RequestShape) { r.Body = []byte(`{"name":["x"]}`) }},
		{"empty body", func(r *RequestShape) { r.Body = nil }},
		{"query value", func(r *RequestShape) { r.Query = "a=2" }},
		{"no query", func(r *RequestShape) { r.Query = "" }},
		{"if-match", func(r *RequestShape) { r.IfMatch = `"v4"` }},
		{"no if-match", func(r *RequestShape) { r.IfMatch = "" }},
		{"content type", func(r *RequestShape) { r.ContentType = "application/merge-patch+json" }},
		{"content type param", func(r *RequestShape) { r.ContentType = "application/json; profile=x" }},
		{"method", func(r *RequestShape) { r.Method = "PUT" }},
		{"path", func(r *RequestShape) { r.Path = "/v1/stores/x" }},
		// Field boundaries: moving bytes between fields must change the sum.
		{"query into if-match", func(r *RequestShape) { r.Query = ""; r.IfMatch = `a=1"v3"` }},
	}
	_, want, err := f.Fingerprint(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range differ {
		t.Run(c.name, func(t *testing.T) {
			r := base
			c.change(&r)
			_, got, err := f.Fingerprint(r)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(got, want) {
				t.Fatal("different requests share a fingerprint")
			}
			ok, err := f.Matches(r, "k1", want)
			if err != nil || ok {
				t.Fatalf("Matches = %v, %v; want false", ok, err)
			}
		})
	}
}

func TestFingerprintRawBodyForNonJSON(t *testing.T) {
	f := fuzzFingerprinter(t)
	shape := func(ct, body string) RequestShape {
		return RequestShape{Method: "POST", Path: "/v1/x", ContentType: ct, Body: []byte(body)}
	}
	// Not JSON: bytes count as sent, and need not parse.
	_, a, err := f.Fingerprint(shape("text/plain", `{"a":1, "b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := f.Fingerprint(shape("text/plain", `{"b":2,"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Fatal("non-JSON bodies were canonicalized")
	}
	if _, _, err := f.Fingerprint(shape("application/octet-stream", "\x00{")); err != nil {
		t.Fatalf("raw body refused: %v", err)
	}
	if _, _, err := f.Fingerprint(shape("", "{")); err != nil {
		t.Fatalf("body without Content-Type refused: %v", err)
	}
	// +json suffixes are JSON.
	_, c, _ := f.Fingerprint(shape("application/problem+json", `{"a":1, "b":2}`))
	_, d, _ := f.Fingerprint(shape("application/problem+json", `{"b":2,"a":1}`))
	if !bytes.Equal(c, d) {
		t.Fatal("+json body was not canonicalized")
	}
}

func TestFingerprintRefuses(t *testing.T) {
	f := fuzzFingerprinter(t)
	cases := map[string]RequestShape{
		"invalid json":  {Method: "POST", Path: "/v1/x", ContentType: "application/json", Body: []byte(`{`)},
		"invalid path":  {Method: "POST", Path: "v1/x"},
		"invalid query": {Method: "POST", Path: "/v1/x", Query: "a=%zz"},
		"invalid type":  {Method: "POST", Path: "/v1/x", ContentType: "application/json; charset"},
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			if _, _, err := f.Fingerprint(r); !domain.IsCode(err, domain.CodeValidation) {
				t.Fatalf("Fingerprint error = %v, want %s", err, domain.CodeValidation)
			}
			if _, err := f.Matches(r, "k1", make([]byte, 32)); !domain.IsCode(err, domain.CodeValidation) {
				t.Fatalf("Matches error = %v, want %s", err, domain.CodeValidation)
			}
		})
	}
}

func TestFingerprintIsKeyedAndStable(t *testing.T) {
	r := jsonShape([]byte(`{"a":1}`))
	one, _ := NewFingerprinter([]Secret{{ID: "k", Key: testKey(1)}})
	two, _ := NewFingerprinter([]Secret{{ID: "k", Key: testKey(2)}})
	id, a, err := one.Fingerprint(r)
	if err != nil {
		t.Fatal(err)
	}
	if id != "k" || len(a) != 32 {
		t.Fatalf("Fingerprint = %q, %d bytes; want k, 32 bytes", id, len(a))
	}
	_, b, _ := two.Fingerprint(r)
	if bytes.Equal(a, b) {
		t.Fatal("the fingerprint does not depend on the secret")
	}
	if bytes.Contains(a, []byte(`{"a":1}`)) {
		t.Fatal("the fingerprint holds the body")
	}
	_, again, _ := one.Fingerprint(r)
	if !bytes.Equal(a, again) {
		t.Fatal("the fingerprint is not deterministic")
	}
}

func TestMatchesRotation(t *testing.T) {
	oldKey, newKey := Secret{ID: "2025-01", Key: testKey(1)}, Secret{ID: "2025-07", Key: testKey(2)}
	r := jsonShape([]byte(`{"name":"x"}`))

	before, err := NewFingerprinter([]Secret{oldKey})
	if err != nil {
		t.Fatal(err)
	}
	keyID, sum, err := before.Fingerprint(r)
	if err != nil {
		t.Fatal(err)
	}

	after, err := NewFingerprinter([]Secret{newKey, oldKey})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := after.Matches(r, keyID, sum); err != nil || !ok {
		t.Fatalf("after rotation, an in-flight retry Matches = %v, %v; want true", ok, err)
	}
	if ok, _ := after.Matches(jsonShape([]byte(`{"name":"y"}`)), keyID, sum); ok {
		t.Fatal("after rotation, a different body matched under the previous key")
	}
	newID, newSum, _ := after.Fingerprint(r)
	if newID != newKey.ID || bytes.Equal(newSum, sum) {
		t.Fatalf("new fingerprints must use the new key: id %q", newID)
	}
	// The id must name the key: the old sum under the new key's id fails.
	if ok, _ := after.Matches(r, newKey.ID, sum); ok {
		t.Fatal("a sum matched under a key id that did not make it")
	}

	retired, _ := NewFingerprinter([]Secret{newKey})
	if ok, err := retired.Matches(r, keyID, sum); err != nil || ok {
		t.Fatalf("with the old key retired, Matches = %v, %v; want false, nil", ok, err)
	}
}

func TestMatchesTruncatedSum(t *testing.T) {
	f := fuzzFingerprinter(t)
	r := jsonShape([]byte(`{}`))
	id, sum, _ := f.Fingerprint(r)
	for _, bad := range [][]byte{nil, {}, sum[:16], append(append([]byte{}, sum...), 0)} {
		if ok, _ := f.Matches(r, id, bad); ok {
			t.Fatalf("Matches accepted a sum of %d bytes", len(bad))
		}
	}
}
