package once

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// maxOperationWait is the longest wait the server takes (longer ones are
// cut to it); each read asks for at most this.
const maxOperationWait = 25 * time.Second

// WaitForOperation reads the operation id until it is succeeded, failed or
// cancelled and returns it. Each read asks the server to wait (GET
// /v1/operations/{id}?wait=) up to 25 s or the time left before ctx's
// deadline, so the answer comes as soon as the operation ends, whichever
// server the request reaches; a read answered before the end (the wait
// was over) is followed by the next. Network errors, 5xx and 429 (over the
// server's cap on waiting reads) are retried as Idempotent retries them,
// after Retry-After.
//
// Without a deadline on ctx it waits as long as the operation runs. When
// ctx ends first it returns the last state read (nil if none) with ctx's
// error; any other answer than 200 (404 for an unknown id) is an error
// that names its status.
func WaitForOperation(ctx context.Context, c ClientInterface, id uuid.UUID, reqEditors ...RequestEditorFn) (*Operation, error) {
	var last *Operation
	for {
		wait := maxOperationWait
		if d, ok := ctx.Deadline(); ok {
			// Leave the answer a tenth of the time left (up to a
			// second) to arrive before the deadline.
			left := time.Until(d)
			wait = min(wait, left-min(left/10, time.Second))
		}
		if ctx.Err() != nil {
			return last, context.Cause(ctx)
		}
		if wait <= 0 { // the deadline is here, though ctx may not know yet
			return last, context.DeadlineExceeded
		}
		w := strconv.FormatInt(max(wait.Milliseconds(), 1), 10) + "ms"
		res, err := Idempotent(ctx, RetryPolicy{MaxElapsed: wait + time.Minute},
			func(ctx context.Context, _ string) (*http.Response, error) {
				return c.GetOperation(ctx, id, &GetOperationParams{Wait: &w}, reqEditors...)
			}, ParseGetOperationResponse)
		if err != nil {
			if ctx.Err() != nil {
				return last, context.Cause(ctx)
			}
			return last, err
		}
		if res.JSON200 == nil {
			return last, fmt.Errorf("once: getOperation %s: %d %s", id, res.StatusCode(), res.Body)
		}
		last = res.JSON200
		if last.Status == OperationStatusSucceeded || last.Status == OperationStatusFailed || last.Status == OperationStatusCancelled {
			return last, nil
		}
	}
}
