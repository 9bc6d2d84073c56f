package idempotency

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestLogKey(t *testing.T) {
	key := uuid.MustParse("8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a")
	got := LogKey(key)
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(got) {
		t.Fatalf("LogKey = %q, want 12 lower-case hex digits", got)
	}
	if got != LogKey(key) {
		t.Fatal("LogKey is not deterministic")
	}
	if strings.Contains(strings.ReplaceAll(key.String(), "-", ""), got) {
		t.Fatalf("LogKey %q is a piece of the key", got)
	}
	if other := LogKey(uuid.MustParse("8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9b")); other == got {
		t.Fatalf("two keys share the log tag %q", got)
	}
	// Pinned so that log tags stay comparable across releases.
	if want := "c67a1c4d5521"; got != want {
		t.Fatalf("LogKey = %q, want %q", got, want)
	}
}
