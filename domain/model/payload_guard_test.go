package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/oncehq/once/domain"
)

func TestCheckPayloadSafe(t *testing.T) {
	cases := []struct {
		name string
		json string
		safe bool
	}{
		{"ids and versions", `{"store_id":"0d7c","credential_version":3,"operation_id":"x"}`, true},
		{"empty", ``, true},
		{"nested safe", `{"a":{"b":[1,"two",{"c":null}]}}`, true},
		{"api key", `{"api_key":"k"}`, false},
		{"camel api key", `{"apiKey":"k"}`, false},
		{"secret nested", `{"store":{"apiSecret":"k"}}`, false},
		{"credentials blob", `{"credentials":{"x":1}}`, false},
		{"password in array", `{"users":[{"password":"p"}]}`, false},
		{"cookie", `{"Set-Cookie":"a=b"}`, false},
		{"access token", `{"access_token":"t"}`, false},
		{"bearer value", `{"note":"Bearer abc.def"}`, false},
		{"jwt value", `{"note":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"}`, false},
		{"presigned url", `{"url":"https://b.s3.amazonaws.com/o?X-Amz-Signature=abc"}`, false},
		{"pem", `{"note":"-----BEGIN RSA PRIVATE KEY-----\nMII"}`, false},
		{"webhook signing secret", `{"note":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`, false},
		{"API key secret", `{"note":"once_sk_4k9z0q2m7x1c_Jx3t8yV0bQ2nR5wK7pL1sD9fG4hA6cE8uZ0iM3oN5qT"}`, false},
		{"API key prefix alone", `{"note":"once_sk_4k9z0q2m7x1c"}`, true},
		{"not json", `{`, false},
		{"two values", `{} {"a":1}`, false},
		{"duplicate names", `{"a":1,"a":2}`, true},
		{"escaped name", `{"pass\u0077ord":"p"}`, false},
		{"top-level secret string", `"Bearer abc"`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckPayloadSafe([]byte(c.json))
			if c.safe && err != nil {
				t.Fatalf("want safe, got %v", err)
			}
			if !c.safe {
				if err == nil {
					t.Fatal("want rejected, got safe")
				}
				if domain.ErrorCode(err) != domain.CodeUnsafePayload {
					t.Fatalf("want %s, got %s", domain.CodeUnsafePayload, domain.ErrorCode(err))
				}
			}
		})
	}
}

// The filter in front of the value regexp lets through every value the
// regexp refuses, whatever the case, spacing or script.
func TestSecretValueFilterKeepsEveryMatch(t *testing.T) {
	for _, v := range []string{
		"Bearer abc", "  bearer\tabc", "BASIC dXNlcjpwYXNz", "baſic x", "\u00a0Bearer x",
		"eyJhbGciOi.eyJzdWIi.sig", "EYJa.b.", "-----BEGIN RSA PRIVATE KEY-----",
		"https://b.example/o?X-Amz-Signature=abc", "https://x/y?sig=1", "https://x/y?a=1&signature=2",
		"WHSEC_abc", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"once_sk_4k9z0q2m7x1c_Jx3t8yV0bQ2nR5wK7pL1sD9fG4hA6cE8uZ0iM3oN5qT", " ONCE_SK_4k9z0q2m7x1c_Jx3t8yV0bQ2nR5wK7pL1sD9fG4hA6cE8uZ0iM3oN5qT",
	} {
		if !secretValue.MatchString(strings.TrimSpace(v)) {
			continue // not a secret for the regexp either
		}
		if !mayMatchSecretValue(v) {
			t.Errorf("the filter drops %q, which the regexp refuses", v)
		}
		b, _ := json.Marshal(map[string]any{"x": v})
		if CheckPayloadSafe(b) == nil {
			t.Errorf("CheckPayloadSafe misses %q", v)
		}
	}
	for _, v := range []string{"0b7c3c1e-9f7a-4b53-8d3e-6b2f0e7d1a11", "2026-12-01T03:33:33Z", "image/png", "bench-1"} {
		if mayMatchSecretValue(v) {
			t.Errorf("the filter lets %q through to the regexp", v)
		}
	}
}

// The error names the field as $.name[].name.
func TestCheckPayloadSafeNamesTheField(t *testing.T) {
	for raw, want := range map[string]string{
		`{"users":[{"id":1},{"password":"p"}]}`: "$.users[].password",
		`{"a":{"note":"Bearer x"}}`:             "$.a.note",
		`{"a":[["ok","eyJa.eyJb.c"]]}`:          "$.a[][]",
		`{"ok":1,"api_key":"k"}`:                "$.api_key",
	} {
		err := CheckPayloadSafe([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), "field "+want+" ") {
			t.Errorf("%s: %v, want the field %s", raw, err, want)
		}
	}
}
