package limits

import (
	"fmt"
	"time"

	"github.com/oncehq/once/domain"
)

// Policy names, as the RateLimit headers carry them.
const (
	PolicyWrites      = "writes"
	PolicyConcurrency = "concurrency"
)

// ConcurrencyRetryAfter is what a request refused by the cap is told to
// wait: the work in flight ahead of it takes milliseconds, but a client
// that comes back at once would only be refused again.
const ConcurrencyRetryAfter = time.Second

// Refusal is why a request was refused: the policy it exceeded, that
// policy's quota, and when to come back. It is the cause (Err) of the
// domain.CodeRateLimited error, for the HTTP adapter's headers.
type Refusal struct {
	// Policy is PolicyWrites or PolicyConcurrency.
	Policy string
	// Quota is the policy's allowance: requests per Window (writes), or
	// requests at once (concurrency, Window zero).
	Quota  int
	Window time.Duration
	// Burst is the writes policy's burst.
	Burst      int
	RetryAfter time.Duration
}

func (r *Refusal) Error() string {
	if r.Policy == PolicyConcurrency {
		return fmt.Sprintf("over %d concurrent requests", r.Quota)
	}
	return fmt.Sprintf("over %d writes per %s", r.Quota, r.Window)
}

func refused(r *Refusal, message string) error {
	return &domain.Error{Code: domain.CodeRateLimited, Message: message, RetryAfter: r.RetryAfter, Err: r}
}
