package domain

import (
	"errors"
	"strings"
	"testing"
)

func TestSanitizeError(t *testing.T) {
	secrets := []string{"hunter2", "sk_live_abc", "sig123", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "tok999", "MIIEpAIB"}
	cases := []string{
		"dial postgres://once:hunter2@db:5432/once failed",
		`publish failed: {"api_key": "sk_live_abc"}`,
		"GET https://bucket.s3.amazonaws.com/obj?X-Amz-Signature=sig123 403",
		"401 with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
		"token=tok999 rejected",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\n-----END RSA PRIVATE KEY-----",
	}
	for _, c := range cases {
		got := SanitizeError(errors.New(c))
		for _, s := range secrets {
			if strings.Contains(got, s) {
				t.Errorf("%q kept %q: %q", c, s, got)
			}
		}
		if strings.ContainsAny(got, "\n\r") {
			t.Errorf("control characters kept: %q", got)
		}
	}
	if got := SanitizeError(errors.New("connection refused")); got != "connection refused" {
		t.Errorf("plain errors stay readable, got %q", got)
	}
	long := SanitizeText(strings.Repeat("é", 2*MaxErrorLength))
	if len(long) > MaxErrorLength+len("…") {
		t.Errorf("not bounded: %d bytes", len(long))
	}
}
