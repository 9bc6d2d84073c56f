package idempotency

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
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
	Scope model.IdempotencyScope
	Shape RequestShape
	// Check, if set, is what the request must pass that waits on the
	// network (a host's DNS look-up): it runs once the request is
	// admitted (the workspace's limits) and no saved response in memory
	// answers it, outside any transaction. A failed check fails the
	// request as its work would, so a key an earlier request completed
	// still gets its saved response.
	Check func(ctx context.Context) error
}

// Result is what the client gets: the response, and whether it is a replay of
// an earlier execution.
type Result struct {
	Response model.SavedResponse
	Replayed bool
}

// Work is the business part of an idempotent request. It runs inside the
// transaction that also holds the idempotency claim, so everything it writes
// commits or rolls back together with the record. The response it returns
// is saved as it is (headers but the replayed ones dropped), and so must
// not hold a secret: what is shown once is left out of it by its builder.
type Work func(ctx context.Context, tx ports.Tx) (model.SavedResponse, error)

// Service runs Work at most once per idempotency scope.
type Service struct {
	uow       ports.UnitOfWork
	fp        *Fingerprinter
	clock     ports.Clock
	retention time.Duration
	inFlight  *inFlight
	completed *completedCache
	admission Admission
	// epoch, if set, says when the store may have been replaced (see
	// completedCache); confirms asks it on a hit, shared among hits.
	epoch    ports.StoreEpoch
	confirms *confirmations
}

// Admission is what the Service asks before it works for a workspace
// (domain/limits.Limits is one). Both refusals are errors the client
// sees (CodeRateLimited).
type Admission interface {
	// Enter admits the database work of one request, or refuses it; it
	// may wait a while for the workspace's turn, never past ctx's end.
	// leave ends it.
	Enter(ctx context.Context, workspace uuid.UUID) (leave func(), err error)
	// Spend charges a request that is about to execute, or refuses it.
	Spend(ctx context.Context, workspace uuid.UUID) error
}

// admitAll is the Admission of a Service without WithAdmission.
type admitAll struct{}

func (admitAll) Enter(context.Context, uuid.UUID) (func(), error) { return func() {}, nil }
func (admitAll) Spend(context.Context, uuid.UUID) error           { return nil }

// Option tunes a Service.
type Option func(*Service)

// WithCompletedCache keeps up to size completed responses in memory for at
// most ttl, so retries of a finished request are answered with no database
// work. Zero size or ttl disables it (the default).
func WithCompletedCache(size int, ttl time.Duration) Option {
	return func(s *Service) { s.completed = newCompletedCache(size, ttl) }
}

// WithAdmission makes the Service ask a before its database work and
// before executing. A request answered without database work (the
// completed cache, a twin of a request running here) asks nothing; a
// replay read from the database is admitted (it takes a connection) but
// spends nothing: only a request that claimed its key and is about to
// execute is charged.
func WithAdmission(a Admission) Option {
	return func(s *Service) { s.admission = a }
}

// WithStoreEpoch ties the completed-response cache to the store's epoch:
// what was cached in an earlier epoch is never answered (completedCache).
// Without it the store is taken to be one and the same for the life of
// the process (the memory store).
func WithStoreEpoch(epoch ports.StoreEpoch) Option {
	return func(s *Service) { s.epoch, s.confirms = epoch, &confirmations{epoch: epoch} }
}

// NewService refuses a retention shorter than MinRetention.
func NewService(uow ports.UnitOfWork, fp *Fingerprinter, clock ports.Clock, retention time.Duration, opts ...Option) (*Service, error) {
	if retention < MinRetention {
		return nil, domain.Errorf(domain.CodeValidation, "idempotency retention %s is below the minimum of %s", retention, MinRetention)
	}
	s := &Service{uow: uow, fp: fp, clock: clock, retention: retention, inFlight: newInFlight(), admission: admitAll{}}
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// Run executes work once for req's scope, in one transaction with the record:
//
//   - first time: claim, run work, save the safe response, commit together;
//   - same key, same request, completed: the saved response, Replayed true;
//   - same key, another request: CodeIdempotencyKeyReused;
//   - same key, still executing elsewhere: CodeIdempotencyInProgress at once;
//   - work fails: everything rolls back, the key stays free for a retry;
//   - the workspace over its limits (WithAdmission): CodeRateLimited,
//     nothing executed, the key free.
//
// Within this process a completed response may come from the cache, and an
// identical request arriving while the scope runs here does no database work
// (see inFlight).
func (s *Service) Run(ctx context.Context, req Request, work Work) (Result, error) {
	keyID, sum, err := s.fp.Fingerprint(req.Shape)
	if err != nil {
		return Result{}, err
	}
	// The epoch before anything is read: a record read or written by this
	// request belongs to it, or to an older store.
	epoch := s.storeEpoch()
	result, hit, epoch, err := s.replayCached(ctx, req, epoch)
	if hit || err != nil {
		return result, err
	}
	f, leader := s.inFlight.join(req.Scope)
	if !leader {
		return s.follow(ctx, req, f)
	}
	defer s.inFlight.release(req.Scope, f, inProgress(nil))
	leave, err := s.admission.Enter(ctx, req.Scope.WorkspaceID)
	if err != nil {
		f.decide(func() { f.err = err })
		return Result{}, err
	}
	defer leave()
	if req.Check != nil {
		if err := req.Check(ctx); err != nil {
			work = func(context.Context, ports.Tx) (model.SavedResponse, error) { return model.SavedResponse{}, err }
		}
	}
	return s.claimAndExecute(ctx, req, fingerprinted{keyID: keyID, sum: sum, epoch: epoch}, f, work)
}

// replayCached is Run's fast path: a completed record of this scope in the
// cache answers the request without the database, as long as the store is
// still the one the record was read from. When it is not, hit is false and
// epoch is the store's current one, so the next lookup forgets the cache.
func (s *Service) replayCached(ctx context.Context, req Request, epoch uint64) (result Result, hit bool, _ uint64, err error) {
	rec, ok := s.completed.get(req.Scope, s.clock.Now(), epoch)
	if !ok {
		return Result{}, false, epoch, nil
	}
	// Answered from memory only while the store is the one the record was
	// read from, as of now: behind a pooler nothing else may have told.
	confirmed, err := s.confirmEpoch(ctx)
	if err != nil {
		return Result{}, false, epoch, err
	}
	if confirmed != epoch {
		// Another store: the database answers.
		return Result{}, false, confirmed, nil
	}
	result, err = s.replay(req, rec)
	return result, true, epoch, err
}

// fingerprinted is what Run knows of a request before it claims its key:
// the fingerprint's key id and sum, and the store epoch its reads belong to.
type fingerprinted struct {
	keyID string
	sum   []byte
	epoch uint64
}

// claimAndExecute is Run's slow path, as the leader of the request's twins
// inside its workspace's admission: in one transaction it claims the key,
// replays the record an earlier request completed, or spends the
// workspace's allowance, runs work and completes the record with its
// response. Twins waiting on f learn the outcome as soon as it is decided.
func (s *Service) claimAndExecute(ctx context.Context, req Request, fp fingerprinted, f *flight, work Work) (Result, error) {
	var (
		result   Result
		read     *model.IdempotencyRecord // committed by an earlier request
		executed *model.IdempotencyRecord // ours, committed only if err is nil
	)
	err := s.uow.Transact(ctx, req.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		now := s.clock.Now()
		claim := model.IdempotencyRecord{
			Scope:            req.Scope,
			FingerprintKeyID: fp.keyID,
			Fingerprint:      fp.sum,
			Status:           model.IdempotencyInProgress,
			CreatedAt:        now,
			ExpiresAt:        now.Add(s.retention),
		}
		existing, err := tx.Idempotency().Claim(ctx, claim)
		if err != nil {
			f.decide(func() { f.err = err })
			return err
		}
		if existing != nil {
			// Twins learn it once the commit confirmed it (below).
			read = existing
			result, err = s.replay(req, *existing)
			return err
		}
		// Charged here, after the read found no completed record and
		// before any work: a replay never spends, and a refusal rolls the
		// claim back with the transaction, leaving the key free.
		if err := s.admission.Spend(ctx, req.Scope.WorkspaceID); err != nil {
			f.decide(func() { f.err = err })
			return err
		}
		f.decide(func() { f.executing = true })
		resp, err := s.execute(ctx, tx, req, work)
		if err != nil {
			return err
		}
		claim.Status, claim.Response, claim.CompletedAt = model.IdempotencyCompleted, resp, s.clock.Now()
		if err := tx.Idempotency().Complete(ctx, req.Scope, resp, claim.CompletedAt); err != nil {
			return err
		}
		executed = &claim
		result = Result{Response: resp}
		return nil
	})
	// The cache only ever holds records the store confirmed: what we read
	// or wrote, once the commit succeeded. A record read is committed
	// data, but it may be on a primary alone that a failover replaces
	// (its own commit's wait for a synchronous standby was cancelled): the
	// store confirms it with the commit of the transaction that read it,
	// and until then neither twins nor the cache answer it.
	if read != nil && err == nil {
		f.decide(func() { f.record = read })
		s.completed.put(*read, fp.epoch)
	} else if executed != nil && err == nil {
		s.completed.put(*executed, fp.epoch)
	}
	if err != nil {
		if domain.IsCode(err, domain.CodeIdempotencyInProgress) {
			return Result{}, inProgress(err)
		}
		return Result{}, err
	}
	return result, nil
}

// execute runs work in tx and returns the response to record.
//
// The response is not scanned for secrets: it is built by the service
// from typed answers whose secret fields are left out of what is saved by
// construction (adapters/httpapi/shown_once.go). A scan of the text
// refused ordinary names a tenant chose ("Basic plan.png", "Bearer Bros
// shop", a URL with sig=) with a 500 for a response nothing was wrong with.
func (s *Service) execute(ctx context.Context, tx ports.Tx, req Request, work Work) (model.SavedResponse, error) {
	// The jobs the work starts carry tokens derived from the scope, so an
	// execution of it after its first commit was lost is the same call to
	// the external systems (domain/model/request_token.go).
	resp, err := work(model.WithRequestOrigin(ctx, RequestOrigin(req.Scope)), tx)
	if err != nil {
		return model.SavedResponse{}, err
	}
	return safeResponse(resp), nil
}

func (s *Service) storeEpoch() uint64 {
	if s.epoch == nil {
		return 0
	}
	return s.epoch.Epoch()
}

func (s *Service) confirmEpoch(ctx context.Context) (uint64, error) {
	if s.epoch == nil {
		return 0, nil
	}
	return s.confirms.confirm(ctx)
}

// follow answers a twin of a request this process is running: it waits (no
// database work, no lock) until the leader's claim decides, then replays the
// record the leader read, or says the request is in progress.
func (s *Service) follow(ctx context.Context, req Request, f *flight) (Result, error) {
	select {
	case <-f.decided:
	case <-ctx.Done():
		return Result{}, inProgress(ctx.Err())
	}
	switch {
	case f.record != nil:
		return s.replay(req, *f.record)
	case f.err != nil && (domain.IsCode(f.err, domain.CodeUnavailable) || domain.IsCode(f.err, domain.CodeRateLimited)):
		// Nothing ran: the twin is told what the leader was.
		return Result{}, f.err
	default:
		return Result{}, inProgress(f.err)
	}
}

// replay answers req with a completed record of its scope, or
// CodeIdempotencyKeyReused when req is another request under the same key.
func (s *Service) replay(req Request, rec model.IdempotencyRecord) (Result, error) {
	same, err := s.fp.Matches(req.Shape, rec.FingerprintKeyID, rec.Fingerprint)
	if err != nil {
		return Result{}, err
	}
	if !same {
		return Result{}, domain.Errorf(domain.CodeIdempotencyKeyReused,
			"this Idempotency-Key was already used for a different request; use a new key for a new request")
	}
	return Result{Response: rec.Response, Replayed: true}, nil
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
func safeResponse(resp model.SavedResponse) model.SavedResponse {
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
