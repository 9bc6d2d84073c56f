package idempotency

import (
	"context"
	"net/http"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// MinRetention is the shortest time a record may be kept: a client may retry
// for a day and must still get its original answer.
const MinRetention = 24 * time.Hour

// DefaultRetention is how long records are kept unless configured otherwise.
const DefaultRetention = 48 * time.Hour

// InProgressRetryAfter is what a concurrent duplicate is told to wait.
const InProgressRetryAfter = time.Second

// replayedHeaders is the allow-list of response headers saved for replay.
// Anything else (Set-Cookie above all) is never stored.
var replayedHeaders = []string{"Location", "Content-Location", "ETag"}

// Request is one idempotent request: who and where (the scope) and what (the
// shape that is fingerprinted).
type Request struct {
	Scope domain.IdempotencyScope
	Shape RequestShape
}

// Result is what the client gets: the response, and whether it is a replay of
// an earlier execution.
type Result struct {
	Response domain.SavedResponse
	Replayed bool
}

// Work is the business part of an idempotent request. It runs inside the
// transaction that also holds the idempotency claim, so everything it writes
// commits or rolls back together with the record.
type Work func(ctx context.Context, tx ports.Tx) (domain.SavedResponse, error)

// Service runs Work at most once per idempotency scope.
type Service struct {
	uow       ports.UnitOfWork
	fp        *Fingerprinter
	clock     ports.Clock
	retention time.Duration
}

// NewService refuses a retention shorter than MinRetention.
func NewService(uow ports.UnitOfWork, fp *Fingerprinter, clock ports.Clock, retention time.Duration) (*Service, error) {
	if retention < MinRetention {
		return nil, domain.Errorf(domain.CodeValidation, "idempotency retention %s is below the minimum of %s", retention, MinRetention)
	}
	return &Service{uow: uow, fp: fp, clock: clock, retention: retention}, nil
}

// Run executes work once for req's scope, in one transaction with the record:
//
//   - first time: claim, run work, save the safe response, commit together;
//   - same key, same request, completed: the saved response, Replayed true;
//   - same key, another request: CodeIdempotencyKeyReused;
//   - same key, still executing elsewhere: CodeIdempotencyInProgress at once;
//   - work fails: everything rolls back, the key stays free for a retry.
func (s *Service) Run(ctx context.Context, req Request, work Work) (Result, error) {
	keyID, sum, err := s.fp.Fingerprint(req.Shape)
	if err != nil {
		return Result{}, err
	}
	var result Result
	err = s.uow.Transact(ctx, req.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		now := s.clock.Now()
		existing, err := tx.Idempotency().Claim(ctx, domain.IdempotencyRecord{
			Scope:            req.Scope,
			FingerprintKeyID: keyID,
			Fingerprint:      sum,
			Status:           domain.IdempotencyInProgress,
			CreatedAt:        now,
			ExpiresAt:        now.Add(s.retention),
		})
		if err != nil {
			return err
		}
		if existing != nil {
			same, err := s.fp.Matches(req.Shape, existing.FingerprintKeyID, existing.Fingerprint)
			if err != nil {
				return err
			}
			if !same {
				return domain.Errorf(domain.CodeIdempotencyKeyReused,
					"this Idempotency-Key was already used for a different request; use a new key for a new request")
			}
			result = Result{Response: existing.Response, Replayed: true}
			return nil
		}

		resp, err := work(ctx, tx)
		if err != nil {
			return err
		}
		resp = safeResponse(resp)
		if err := domain.CheckPayloadSafe(resp.Body); err != nil {
			// A response that would leak a secret is a bug in the use case;
			// refuse to store (and to send) it.
			return domain.Wrap(domain.CodeInternal, err, "response refused by the secret guard")
		}
		if err := tx.Idempotency().Complete(ctx, req.Scope, resp, s.clock.Now()); err != nil {
			return err
		}
		result = Result{Response: resp}
		return nil
	})
	if err != nil {
		if domain.IsCode(err, domain.CodeIdempotencyInProgress) {
			return Result{}, inProgress(err)
		}
		return Result{}, err
	}
	return result, nil
}

// inProgress makes sure the client is told when to come back.
func inProgress(err error) error {
	return &domain.Error{
		Code:       domain.CodeIdempotencyInProgress,
		Message:    "a request with this Idempotency-Key is still being executed; retry later with the same key",
		RetryAfter: InProgressRetryAfter,
		Err:        err,
	}
}

// safeResponse keeps only the allow-listed headers.
func safeResponse(resp domain.SavedResponse) domain.SavedResponse {
	kept := map[string]string{}
	for name, value := range resp.Headers {
		canonical := http.CanonicalHeaderKey(name)
		for _, allowed := range replayedHeaders {
			if canonical == allowed {
				kept[canonical] = value
			}
		}
	}
	resp.Headers = kept
	return resp
}
