package once

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/uuid"
)

// RetryPolicy bounds the retries of one logical call. Zero values take the
// defaults.
type RetryPolicy struct {
	// MaxElapsed is the deadline of the whole call, retries included
	// (default 30s). The context's own deadline applies as well.
	MaxElapsed time.Duration
	// InitialInterval and MaxInterval bound the exponential backoff with
	// jitter between attempts (defaults 200ms and 5s). A Retry-After from
	// the server replaces the backoff for that wait.
	InitialInterval, MaxInterval time.Duration
	// OnRetry, when set, is told about each retry before its wait.
	OnRetry func(err error, wait time.Duration)
}

// Problem codes the retry decision reads.
const (
	codeInProgress = "IDEMPOTENCY_REQUEST_IN_PROGRESS"
)

// Idempotent runs one logical call of an idempotent operation: it makes the
// Idempotency-Key once and sends the same key on every attempt, so the
// server executes the operation at most once however many attempts reach
// it. It retries network errors, 5xx answers and 409
// IDEMPOTENCY_REQUEST_IN_PROGRESS (after Retry-After), with backoff, until
// MaxElapsed; never another 4xx (409 IDEMPOTENCY_KEY_REUSED means the key
// was used for a different request, and no retry can fix that).
//
// call sends the request with the key (a generated Client method); parse
// reads the final response (the generated Parse<Operation>Response). When
// retries run out on a retryable answer, that last answer is parsed and
// returned; a network error is returned as the error.
func Idempotent[R any](ctx context.Context, p RetryPolicy,
	call func(ctx context.Context, key string) (*http.Response, error),
	parse func(*http.Response) (R, error),
) (R, error) {
	return IdempotentWithKey(ctx, uuid.NewString(), p, call, parse)
}

// IdempotentWithKey is Idempotent with a key the caller made, for a caller
// that stores the key before calling so that it can resume after its own
// crash with the same key.
func IdempotentWithKey[R any](ctx context.Context, key string, p RetryPolicy,
	call func(ctx context.Context, key string) (*http.Response, error),
	parse func(*http.Response) (R, error),
) (R, error) {
	var zero R
	eb := backoff.NewExponentialBackOff()
	eb.InitialInterval = orDefault(p.InitialInterval, 200*time.Millisecond)
	eb.MaxInterval = orDefault(p.MaxInterval, 5*time.Second)
	opts := []backoff.RetryOption{
		backoff.WithBackOff(eb),
		backoff.WithMaxElapsedTime(orDefault(p.MaxElapsed, 30*time.Second)),
	}
	if p.OnRetry != nil {
		opts = append(opts, backoff.WithNotify(p.OnRetry))
	}
	res, err := backoff.Retry(ctx, func() (*http.Response, error) {
		res, err := call(ctx, key)
		if err != nil {
			if ctx.Err() != nil {
				return nil, backoff.Permanent(err)
			}
			return nil, err // the network: the request may or may not have arrived
		}
		return res, retryable(res)
	}, opts...)
	var again *retryableStatus
	if err != nil && !(errors.As(err, &again) && res != nil) {
		if res != nil {
			_ = res.Body.Close()
		}
		return zero, err
	}
	return parse(res)
}

// retryableStatus is an answer worth sending again with the same key.
type retryableStatus struct {
	status int
	code   string
}

func (e *retryableStatus) Error() string {
	return fmt.Sprintf("once: %d %s", e.status, e.code)
}

// retryable decides from the answer: nil ends the retries. The body is read
// to find the problem's code, and put back for parse.
func retryable(res *http.Response) error {
	if res.StatusCode < 500 && res.StatusCode != http.StatusConflict {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return err // cut while reading: a network error
	}
	var problem struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(body, &problem)
	switch {
	case res.StatusCode >= 500:
	case problem.Code == codeInProgress:
	default:
		return nil // KEY_REUSED and every other conflict: final
	}
	e := &retryableStatus{status: res.StatusCode, code: problem.Code}
	if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs >= 0 {
		return errors.Join(e, backoff.RetryAfter(secs))
	}
	return e
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
