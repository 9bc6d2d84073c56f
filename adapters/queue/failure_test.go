package queue_test

import (
	"errors"
	"testing"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
)

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{domain.Errorf(domain.CodeUnavailable, "x"), true},
		{domain.Errorf(domain.CodeIdempotencyInProgress, "x"), true},
		{domain.Errorf(domain.CodeInternal, "x"), true},
		{errors.New("driver: bad connection"), true}, // no code: CodeInternal
		{domain.Errorf(domain.CodeValidation, "x"), false},
		{domain.Errorf(domain.CodeNotFound, "x"), false},
		{domain.Errorf(domain.CodeConflict, "x"), false},
		{domain.Errorf(domain.CodeUnsafePayload, "x"), false},
	} {
		if got := queue.Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
