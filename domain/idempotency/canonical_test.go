package idempotency

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/oncehq/once/domain"
)

func TestCanonicalJSON(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"empty", ``, ``},
		{"key order", `{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{"whitespace", " {\n\t\"a\" : [ 1 , 2 ] \r\n} ", `{"a":[1,2]}`},
		{"nested order", `{"z":{"y":1,"x":2},"a":null}`, `{"a":null,"z":{"x":2,"y":1}}`},
		{"number spelling", `[1.0,1e2,-0,0.10,1E-2]`, `[1,100,0,0.1,0.01]`},
		{"string escapes", `"\u0041\/\u00e9"`, `"A/é"`},
		{"control escape", `"\u000a"`, `"\n"`},
		{"scalar", ` true `, `true`},
		{"array order kept", `[2,1]`, `[2,1]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CanonicalJSON([]byte(c.in))
			if err != nil {
				t.Fatalf("CanonicalJSON(%q): %v", c.in, err)
			}
			if string(got) != c.want {
				t.Fatalf("CanonicalJSON(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestCanonicalJSONRefuses(t *testing.T) {
	for _, in := range []string{
		`{`, `{"a":1,}`, `{"a":1,"a":2}`, `[1 2]`, `1e400`, `"\ud800"`, "\"\xff\"", `nul`, ` `, `{"a":1}x`,
	} {
		t.Run(in, func(t *testing.T) {
			_, err := CanonicalJSON([]byte(in))
			if !domain.IsCode(err, domain.CodeValidation) {
				t.Fatalf("CanonicalJSON(%q) error = %v, want %s", in, err, domain.CodeValidation)
			}
		})
	}
}

func TestCanonicalJSONErrorDoesNotQuoteBody(t *testing.T) {
	body := `{"api_key":"sk_live_abcdef", oops}`
	_, err := CanonicalJSON([]byte(body))
	if err == nil || bytes.Contains([]byte(err.Error()), []byte("sk_live")) {
		t.Fatalf("error %v must exist and must not quote the body", err)
	}
}

// FuzzCanonicalJSON checks the two promises the fingerprint rests on: a
// document re-encoded differently (other key order, other whitespace, other
// number and string spelling) canonicalizes to the same bytes, and two
// documents that decode to different values get different fingerprints.
func FuzzCanonicalJSON(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{`{"a":1}`, `{"a":1.0}`},
		{`{"a":1}`, `{"a":2}`},
		{`[1,2]`, `[2,1]`},
		{`"\u00e9<&>"`, `"é<&>"`},
		{`{"n":1e21,"m":-0.0}`, `{"n":1000000000000000000000,"m":0}`},
		{`{"a":{"b":{"c":[{}]}}}`, `{"a":{"b":{"c":[[]]}}}`},
		{`""`, `null`},
		{`{"a":1,"a":2}`, `{`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	fp := fuzzFingerprinter(f)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ca, va, ok := canonicalAndValue(t, a)
		if !ok {
			return
		}

		// Re-encoded with Go's key order (sorted), indentation and escaping.
		reencoded, err := json.MarshalIndent(va, " ", "\t")
		if err != nil {
			t.Fatalf("re-marshal %q: %v", a, err)
		}
		cr, err := CanonicalJSON(reencoded)
		if err != nil {
			t.Fatalf("CanonicalJSON(%q) (re-encoding of %q): %v", reencoded, a, err)
		}
		if !bytes.Equal(ca, cr) {
			t.Fatalf("re-encoding changed the canonical form:\n%q -> %q\n%q -> %q", a, ca, reencoded, cr)
		}
		// The canonical form is itself a fixed point.
		if cc, err := CanonicalJSON(ca); err != nil || !bytes.Equal(cc, ca) {
			t.Fatalf("canonical form %q is not a fixed point: %q (%v)", ca, cc, err)
		}

		cb, vb, ok := canonicalAndValue(t, b)
		if !ok {
			return
		}
		sameValue := reflect.DeepEqual(va, vb)
		if sameValue != bytes.Equal(ca, cb) {
			t.Fatalf("same value = %v but canonical forms %q and %q", sameValue, ca, cb)
		}
		_, fa, err := fp.Fingerprint(jsonShape(a))
		if err != nil {
			t.Fatal(err)
		}
		_, fb, err := fp.Fingerprint(jsonShape(b))
		if err != nil {
			t.Fatal(err)
		}
		if sameValue != bytes.Equal(fa, fb) {
			t.Fatalf("same value = %v but fingerprints equal = %v for %q and %q", sameValue, !sameValue, a, b)
		}
	})
}

// canonicalAndValue canonicalizes doc and decodes it; ok is false for the
// documents that are not valid I-JSON (RFC 7493: duplicate names, invalid
// UTF-8, lone surrogates, numbers beyond a double), which CanonicalJSON must
// refuse, or that encoding/json itself refuses.
func canonicalAndValue(t *testing.T, doc []byte) (canonical []byte, value any, ok bool) {
	t.Helper()
	canonical, cerr := CanonicalJSON(doc)
	if len(doc) == 0 {
		return nil, nil, false
	}
	if err := json.Unmarshal(doc, &value); err != nil {
		if cerr == nil {
			t.Fatalf("CanonicalJSON accepted %q, which encoding/json refuses: %v", doc, err)
		}
		return nil, nil, false
	}
	if cerr != nil {
		if !domain.IsCode(cerr, domain.CodeValidation) {
			t.Fatalf("CanonicalJSON(%q): unexpected error %v", doc, cerr)
		}
		return nil, nil, false
	}
	return canonical, value, true
}

func jsonShape(body []byte) RequestShape {
	return RequestShape{
		Method:      "POST",
		Path:        "/v1/stores",
		ContentType: "application/json",
		Body:        body,
	}
}
