package once

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/uuid"
)

// RetryPolicy bounds the retries of one logical call. Zero values take the
// defaults.
type RetryPolicy struct {
	// MaxElapsed is the deadline of the whole call, retries included
	// (default 30s). The context's own deadline applies as well, the
	// earlier of the two.
	MaxElapsed time.Duration
	// InitialInterval and MaxInterval bound the exponential backoff with
	// jitter between attempts (defaults 200ms and 5s). A Retry-After from
	// the server replaces the backoff for that wait, plus up to
	// InitialInterval of jitter, so that clients refused together do not
	// all come back at the same instant.
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
// it. It retries network errors, 5xx answers, 429 (a limit of the
// workspace: nothing ran) and 409 IDEMPOTENCY_REQUEST_IN_PROGRESS, after
// the answer's Retry-After (seconds or an HTTP-date) or else with
// exponential backoff, until the deadline: MaxElapsed or the context's,
// the earlier. It never retries another 4xx (409 IDEMPOTENCY_KEY_REUSED
// means the key was used for a different request, and no retry can fix
// that).
//
// call sends the request with the key (a generated Client method); parse
// reads the final response (the generated Parse<Operation>Response). When
// the next attempt could not start before the deadline, the last answer is
// parsed and returned at once (a 429 whose Retry-After lies past the
// deadline is not waited for); when the last attempt got no answer, its
// network error is returned. A cancelled context ends the call with the
// context's error.
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
	eb.Reset()
	deadline := time.Now().Add(orDefault(p.MaxElapsed, 30*time.Second))
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for {
		res, err := call(ctx, key)
		if err != nil && ctx.Err() != nil {
			return zero, err
		}
		if err == nil {
			if err = retryable(res); err == nil {
				return parse(res)
			}
		}
		// err is why to try again: an answer worth sending again
		// (*retryableStatus, res kept with its body), or the network (the
		// request may or may not have arrived).
		var again *retryableStatus
		answered := errors.As(err, &again)
		wait := eb.NextBackOff()
		if answered && again.told {
			wait = again.retryAfter + rand.N(eb.InitialInterval)
			eb.Reset()
		}
		if time.Now().Add(wait).After(deadline) {
			if answered {
				return parse(res)
			}
			return zero, err
		}
		if p.OnRetry != nil {
			p.OnRetry(err, wait)
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			if answered && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return parse(res) // the deadline, as above
			}
			return zero, context.Cause(ctx)
		}
	}
}

// retryableStatus is an answer worth sending again with the same key.
type retryableStatus struct {
	status int
	code   string
	// retryAfter is the server's Retry-After, when it sent one (told).
	retryAfter time.Duration
	told       bool
}

func (e *retryableStatus) Error() string {
	return fmt.Sprintf("once: %d %s", e.status, e.code)
}

// retryable decides from the answer: nil ends the retries. The body is read
// to find the problem's code, and put back for parse.
func retryable(res *http.Response) error {
	if res.StatusCode < 500 && res.StatusCode != http.StatusConflict && res.StatusCode != http.StatusTooManyRequests {
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
	case res.StatusCode == http.StatusTooManyRequests: // over a limit: nothing ran
	case problem.Code == codeInProgress:
	default:
		return nil // KEY_REUSED and every other conflict: final
	}
	e := &retryableStatus{status: res.StatusCode, code: problem.Code}
	if h := res.Header.Get("Retry-After"); h != "" {
		e.retryAfter, e.told = parseRetryAfter(h, time.Now())
		if e.told {
			// The generated parsers read Retry-After as the integer the
			// spec declares; an HTTP-date (an intermediary's) is handed
			// on as the seconds it means.
			res.Header.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(e.retryAfter.Seconds())), 10))
		}
	}
	return e
}

// maxRetryAfter bounds a Retry-After in seconds, so that the wait it means
// fits a time.Duration; any such wait lies past every deadline.
const maxRetryAfter = 1 << 32

// parseRetryAfter reads a Retry-After: delay-seconds or an HTTP-date, the
// wait from now (zero for a date already past). ok is false for anything
// else.
func parseRetryAfter(h string, now time.Time) (wait time.Duration, ok bool) {
	h = strings.TrimSpace(h)
	if secs, err := strconv.ParseUint(h, 10, 64); err == nil {
		return time.Duration(min(secs, maxRetryAfter)) * time.Second, true
	}
	at, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(0, at.Sub(now)), true
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
