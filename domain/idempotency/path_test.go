package idempotency

import (
	"strings"
	"testing"

	"github.com/oncehq/once/domain"
)

func TestNormalizePath(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{"/", "/"},
		{"//", "/"},
		{"/v1/stores", "/v1/stores"},
		{"/v1/stores/", "/v1/stores"},
		{"/v1//stores///", "/v1/stores"},
		{"/v1/./stores", "/v1/stores"},
		{"/v1/x/../stores", "/v1/stores"},
		{"/v1/stores/..", "/v1"},
		{"/v1/stores/.", "/v1/stores"},
		{"/..", "/"},
		{"/../../v1", "/v1"},
		{"/a//../b", "/b"},                               // slashes collapse before ".." applies, as path.Clean
		{"/v1/%73tores", "/v1/stores"},                   // unreserved escape decoded
		{"/v1/%7e%2d%2E%5F", "/v1/~-._"},                 // all unreserved
		{"/v1/%2e%2e/stores", "/stores"},                 // encoded dot segment
		{"/v1/%2E/stores", "/v1/stores"},                 // encoded dot segment
		{"/v1/a%2fb", "/v1/a%2Fb"},                       // encoded slash stays data
		{"/v1/a%2Fb", "/v1/a%2Fb"},                       //
		{"/v1/caf%c3%a9", "/v1/caf%C3%A9"},               // hex upper-cased
		{"/v1/caf\xc3\xa9", "/v1/caf%C3%A9"},             // raw non-ASCII escaped
		{"/v1/a b", "/v1/a%20b"},                         // raw space escaped
		{"/v1/a%20b", "/v1/a%20b"},                       //
		{"/v1/a:b@c!$&'()*+,;=", "/v1/a:b@c!$&'()*+,;="}, // sub-delims stay raw
		{"/v1/%21", "/v1/%21"},                           // reserved escape stays escaped
		{"/v1/a?b", "/v1/a%3Fb"},                         // "?" in a path is data
		{"/v1/...", "/v1/..."},                           // not a dot segment
		{"/v1/.hidden", "/v1/.hidden"},
		{"/v1/stores/0d7c1c7e-7f4a-4b43-9f5e-1d0f2a3b4c5d/sync", "/v1/stores/0d7c1c7e-7f4a-4b43-9f5e-1d0f2a3b4c5d/sync"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := NormalizePath(c.in)
			if err != nil {
				t.Fatalf("NormalizePath(%q): %v", c.in, err)
			}
			if got != c.want {
				t.Fatalf("NormalizePath(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestNormalizePathRefuses(t *testing.T) {
	for _, in := range []string{"", "v1/stores", "./v1", "/v1/%", "/v1/%4", "/v1/%zz", "/v1/%g1", "/%%41"} {
		t.Run(in, func(t *testing.T) {
			_, err := NormalizePath(in)
			if !domain.IsCode(err, domain.CodeValidation) {
				t.Fatalf("NormalizePath(%q) error = %v, want %s", in, err, domain.CodeValidation)
			}
		})
	}
}

func TestCanonicalQuery(t *testing.T) {
	cases := []struct {
		name string
		a, b string // equal after canonicalization
		want string
	}{
		{"empty", "", "", ""},
		{"order", "b=2&a=1", "a=1&b=2", "a=1&b=2"},
		{"values sorted", "a=2&a=1", "a=1&a=2", "a=1&a=2"},
		{"key before value", "ab=1&a=2", "a=2&ab=1", "a=2&ab=1"},
		{"escape case", "q=%c3%a9", "q=%C3%A9", "q=%C3%A9"},
		{"unreserved decoded", "%61=%7E", "a=~", "a=~"},
		{"plus is space", "q=a+b", "q=a%20b", "q=a+b"},
		{"literal plus", "q=a%2Bb", "q=a%2bb", "q=a%2Bb"},
		{"bare key", "flag", "flag=", "flag="},
		{"empty params dropped", "&a=1&&b=2&", "a=1&b=2", "a=1&b=2"},
		{"equals in value", "a=b=c", "a=b%3Dc", "a=b%3Dc"},
		{"semicolon is data", "a=1;b=2", "a=1%3Bb%3D2", "a=1%3Bb%3D2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ga, err := CanonicalQuery(c.a)
			if err != nil {
				t.Fatalf("CanonicalQuery(%q): %v", c.a, err)
			}
			gb, err := CanonicalQuery(c.b)
			if err != nil {
				t.Fatalf("CanonicalQuery(%q): %v", c.b, err)
			}
			if ga != c.want || gb != c.want {
				t.Fatalf("CanonicalQuery(%q) = %q, CanonicalQuery(%q) = %q, want %q", c.a, ga, c.b, gb, c.want)
			}
			again, err := CanonicalQuery(ga)
			if err != nil || again != ga {
				t.Fatalf("not idempotent: %q -> %q (%v)", ga, again, err)
			}
		})
	}
}

func TestCanonicalQueryDistinguishes(t *testing.T) {
	pairs := [][2]string{
		{"a=1", "a=2"},
		{"a=1", "b=1"},
		{"a=1&a=1", "a=1"},
		{"a=1&b=2", "a=1b=2"},
		{"q=a%2Bb", "q=a+b"},
		{"a=%26b", "a=&b"},
	}
	for _, p := range pairs {
		x, _ := CanonicalQuery(p[0])
		y, _ := CanonicalQuery(p[1])
		if x == y {
			t.Errorf("CanonicalQuery(%q) = CanonicalQuery(%q) = %q", p[0], p[1], x)
		}
	}
}

func TestCanonicalQueryRefuses(t *testing.T) {
	for _, in := range []string{"a=%", "a=%zz", "%g=1", "a=1&b=%4"} {
		_, err := CanonicalQuery(in)
		if !domain.IsCode(err, domain.CodeValidation) {
			t.Errorf("CanonicalQuery(%q) error = %v, want %s", in, err, domain.CodeValidation)
		}
	}
}

func FuzzNormalizePath(f *testing.F) {
	for _, seed := range []string{
		"/", "//", "/v1/stores/", "/a/./b/../c", "/%2e%2E/x", "/a%2fb", "/caf%c3%a9",
		"/a b", "/..", "/.../", "/a//../b", "/%7E", "/%",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizePath(in)
		if err != nil {
			if !domain.IsCode(err, domain.CodeValidation) {
				t.Fatalf("NormalizePath(%q): unexpected error %v", in, err)
			}
			return
		}
		again, err := NormalizePath(out)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
		if !strings.HasPrefix(out, "/") {
			t.Fatalf("NormalizePath(%q) = %q does not start with /", in, out)
		}
		for _, bad := range []string{"//", "/./", "/../"} {
			if strings.Contains(out, bad) {
				t.Fatalf("NormalizePath(%q) = %q contains %q", in, out, bad)
			}
		}
		if out != "/" && (strings.HasSuffix(out, "/") || strings.HasSuffix(out, "/.") || strings.HasSuffix(out, "/..")) {
			t.Fatalf("NormalizePath(%q) = %q ends in a slash or dot segment", in, out)
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; c != '/' && c != '%' && !isPathChar(c) {
				t.Fatalf("NormalizePath(%q) = %q holds raw byte %q", in, out, c)
			}
		}
	})
}
