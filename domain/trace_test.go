package domain

import (
	"context"
	"testing"
)

func TestTraceparent(t *testing.T) {
	valid := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if got := TraceparentFrom(WithTraceparent(context.Background(), valid)); got != valid {
		t.Fatalf("valid traceparent lost: %q", got)
	}
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"} {
		if got := TraceparentFrom(WithTraceparent(context.Background(), bad)); got != "" {
			t.Errorf("%q should be dropped, got %q", bad, got)
		}
	}
}
