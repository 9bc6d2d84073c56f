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

// Operators read last_error and logs; where the brokers and databases live
// is not theirs to read there (nor any client's).
func TestSanitizeErrorRedactsInternalAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"cannot xadd message 1: dial tcp 10.1.2.3:6379: connect: connection refused": "cannot xadd message 1: dial tcp [address]: connect: connection refused",
		"dial tcp: lookup redis.internal on 127.0.0.11:53: no such host":             "dial tcp: lookup [address] on [address]: no such host",
		"broker unreachable at mq.internal:5672 (amqp): EOF":                         "broker unreachable at [address] (amqp): EOF",
		"dial tcp [fd00::1]:5432: i/o timeout":                                       "dial tcp [address]: i/o timeout",
		"queue: publish 2 message(s) to once.media.process: nack":                    "queue: publish 2 message(s) to once.media.process: nack",
	} {
		if got := SanitizeText(in); got != want {
			t.Errorf("SanitizeText(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
