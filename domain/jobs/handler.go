package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// Job is what one task type adds to the lifecycle every background job
// follows; Handler runs that lifecycle. J is the job's payload, W what
// step 1 reads for the external call, R what the call gives step 3.
//
// The steps, each its own transaction so nothing is held open while an
// external system is called:
//
//  1. Begin: read the operation and the task; a finished one means a
//     duplicate delivery (proceed false, done), a cancelled one included:
//     a job cancelled before it started never calls out. A running one
//     whose cancel a user asked for ends cancelled here, before calling
//     the external system again (a retry, a redelivery, a wait's end:
//     the step boundary every kind has). A task that cannot run
//     (its store or product is gone) is ended here. Otherwise task and
//     operation become running and Begin hands Call what it needs.
//  2. Call: the external call, outside any transaction, with the job's
//     request token (model.JobOperation.TokenOr: derived from the request
//     that started the job, else the task id, or the operation id for
//     tasks that are one per operation). Its error decides what happens next: Retry(err) is
//     returned as it is (the job runs again later, an attempt of its own
//     spent); Fail(reason) ends the task failed with reason; any other
//     error is the external system's: a transient one
//     (platformerr.Retryable) is returned marked platformerr.Upstream, so
//     the job runs again later without spending an attempt and the
//     destination's breaker hears of it, a permanent one ends the task
//     failed with platformerr.Reason(Refused, err).
//  3. End: check again that the task is unfinished (a concurrent delivery
//     may have ended it), then record the outcome: out on success, reason
//     (non-empty, safe to show) on a permanent failure. Log lines written
//     here follow the commit (Transact). A concurrent delivery that ends
//     the job after the check still cannot be overwritten: the
//     operation's update refuses a finished operation
//     (ports.ErrOperationFinished), the transaction rolls back, and this
//     delivery's outcome is dropped with a log line, as in step 1.
//
// A message that can never succeed (another event type, a payload that
// does not decode or lacks an id, a message that is not an event of its
// workspace's outbox as written: Stored) is CodeValidation, which the
// worker gives up on at once.
type Job[J Payload, W, R any] struct {
	// Event is the event type the handler runs.
	Event string
	// Noun is what the logs call the task ("sync"); its id is logged
	// under it.
	Noun string
	// External names the system Call calls, for the logs ("platform").
	External string
	// Refused is the reason a permanent error of the external system
	// starts with.
	Refused string
	// Valid, if set, checks the payload's fields beyond its ids.
	Valid func(J) bool

	Begin func(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], now time.Time) (w W, proceed bool, err error)
	Call  func(ctx context.Context, log *slog.Logger, run Run[J], w W) (R, error)
	End   func(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], out R, reason string, now time.Time) error
	// Stop, if set, says the kind's Call can be stopped midway with nothing
	// done outside that matters (it only reads from the external system,
	// or its steps resume), and ends the job cancelled when it was: while
	// Call runs, the handler watches the operation, and a user's cancel
	// cancels Call's context (OnRow.Stop). Without it, a cancel of a
	// running job waits for the job's next start (Begin).
	Stop func(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], now time.Time) error
	// Settle, if set, decides what a conflict in End's transaction means
	// (a concurrent delivery recording the same task); without it the
	// conflict is returned.
	Settle func(ctx context.Context, log *slog.Logger, run Run[J], conflict error) error
}

// Payload is a job's payload: it names the operation that tracks the job
// (Operation, from the model.JobOperation it embeds) and the task it runs
// (Task: the task row, or the store or media of a longer-lived row).
type Payload interface {
	Operation() uuid.UUID
	Task() uuid.UUID
}

// Run is one delivery of a job: its payload, the ids it names and its
// workspace.
type Run[J any] struct {
	Job         J
	Workspace   uuid.UUID
	OperationID uuid.UUID
	TaskID      uuid.UUID
	Noun        string

	// started is the operation as step 1 committed it, for step 3 (see
	// OnOperation.End); nil outside Handler.Handle.
	started *startedOperation
}

// startedOperation is the operation of one delivery as its Begin left it
// running, once that transaction committed (ok).
type startedOperation struct {
	op model.Operation
	ok bool
}

// Handler runs a Job for each delivery of its event type.
type Handler[J Payload, W, R any] struct {
	job        Job[J, W, R]
	uow        ports.UnitOfWork
	clock      ports.Clock
	log        *slog.Logger
	cancelPoll time.Duration
}

var _ ports.MessageHandler = (*Handler[Payload, any, any])(nil)

// NewHandler builds the handler of job; log may be nil.
func NewHandler[J Payload, W, R any](job Job[J, W, R], uow ports.UnitOfWork, clock ports.Clock, log *slog.Logger) *Handler[J, W, R] {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler[J, W, R]{job: job, uow: uow, clock: clock, log: log.With("handler", job.Event), cancelPoll: CancelPoll}
}

// Event is the event type h runs: the worker hands it the messages of
// that type.
func (h *Handler[J, W, R]) Event() string { return h.job.Event }

// Handle processes one delivery; see Job.
func (h *Handler[J, W, R]) Handle(ctx context.Context, msg ports.Message) error {
	j := h.job
	payload, err := Decode(msg, j.Event, func(p J) bool {
		return p.Operation() != uuid.Nil && p.Task() != uuid.Nil && (j.Valid == nil || j.Valid(p))
	})
	if err != nil {
		return err
	}
	if msg.OrderingKey == "" {
		// Its end frees no follower: no wake-up for the Dispatchers.
		ctx = domain.WithUnorderedJob(ctx)
	}
	run := Run[J]{Job: payload, Workspace: msg.WorkspaceID, Noun: j.Noun, started: &startedOperation{}}
	run.OperationID, run.TaskID = payload.Operation(), payload.Task()
	log := domain.LogWithin(ctx, h.log.With("message", msg.ID, "workspace", run.Workspace, "operation", run.OperationID, j.Noun, run.TaskID))

	// Begin's and End's transactions return a refused write's error as
	// it is and write nothing after it: their writes may go with their
	// COMMIT, a refusal reported by the commit.
	steps := ports.WithRefusalsAtCommit(ctx)
	var w W
	proceed := false
	err = Transact(steps, h.uow, run.Workspace, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		// Stored and Begin read these first (and a verification its
		// store): in one round trip.
		if err := tx.PrefetchJob(ctx, msg.ID, run.OperationID); err != nil {
			return err
		}
		if _, err := Stored(ctx, tx, msg); err != nil {
			if domain.IsCode(err, domain.CodeNotFound) {
				// Never from our outbox (or deleted from it): running it
				// would act on whatever ids the message names.
				return domain.Wrap(domain.CodeValidation, err, "message is no job of its workspace's outbox")
			}
			return err
		}
		var err error
		w, proceed, err = j.Begin(ctx, tx, log, run, h.clock.Now())
		return err
	})
	if err != nil || !proceed {
		// Nothing was called: whatever Begin found, the destination's pace
		// and breaker have nothing to learn from this delivery.
		domain.ReportNoCall(ctx)
		return h.lostRace(log, err, "")
	}

	callCtx, endWatch := h.watchCancel(ctx, run)
	out, err := j.Call(callCtx, log, run, w)
	endWatch()
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(callCtx), errCancelRequested) {
		log.Info(j.Noun+" stopped at a user's cancel", "error", domain.SanitizeError(err))
		domain.ReportNoCall(ctx) // the call was cut short by us, not answered
		err = Transact(ctx, h.uow, run.Workspace, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
			return j.Stop(ctx, tx, log, run, h.clock.Now())
		})
		return h.lostRace(log, err, "")
	}
	reason := ""
	if err != nil {
		if reason, err = h.verdict(ctx, log, err); err != nil {
			return err
		}
	}
	err = Transact(steps, h.uow, run.Workspace, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		// What End reads first, and whether an end has webhooks to
		// announce, in one round trip.
		if err := tx.PrefetchJobEnd(ctx, run.OperationID); err != nil {
			return err
		}
		return j.End(ctx, tx, log, run, out, reason, h.clock.Now())
	})
	if j.Settle != nil && domain.IsCode(err, domain.CodeConflict) {
		return j.Settle(ctx, log, run, err)
	}
	return h.lostRace(log, err, reason)
}

// CancelPoll is how often a running job whose kind can stop (Job.Stop)
// reads its operation for a user's cancel, unless WithCancelPoll says
// otherwise: one short read per running job and poll, for the few kinds
// that need it.
const CancelPoll = time.Second

// WithCancelPoll sets how often a running job whose kind can stop reads
// its operation for a user's cancel (<= 0: CancelPoll). It returns h.
func (h *Handler[J, W, R]) WithCancelPoll(every time.Duration) *Handler[J, W, R] {
	if every <= 0 {
		every = CancelPoll
	}
	h.cancelPoll = every
	return h
}

// errCancelRequested is the cause of a Call's context cancelled by the
// watch: a user asked to cancel the running job.
var errCancelRequested = errors.New("cancel requested by a user")

// watchCancel is the context Call runs in: for a kind that can stop
// (Job.Stop), one that a user's cancel cancels, found by reading the
// operation every cancelPoll until end is called. A failed read is let
// be: the next poll reads again, and the job's next start checks anyway.
func (h *Handler[J, W, R]) watchCancel(ctx context.Context, run Run[J]) (callCtx context.Context, end func()) {
	if h.job.Stop == nil {
		return ctx, func() {}
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(h.cancelPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-callCtx.Done():
				return
			case <-tick.C:
			}
			var requested bool
			err := h.uow.Transact(callCtx, run.Workspace, func(ctx context.Context, tx ports.Tx) error {
				op, err := tx.Operations().Get(ctx, run.OperationID)
				requested = op.CancelRequested()
				return err
			})
			if err == nil && requested {
				cancel(errCancelRequested)
				return
			}
		}
	}()
	return callCtx, func() {
		close(done)
		<-stopped
		cancel(nil)
	}
}

// lostRace drops this delivery when its transaction found the operation
// ended by a concurrent delivery of the same job
// (ports.ErrOperationFinished: the repository never overwrites an
// outcome): the transaction rolled back, the recorded outcome stands, and
// there is nothing left to do. reason is the failure this delivery would
// have recorded ("" for a success or none). Other errors are returned.
func (h *Handler[J, W, R]) lostRace(log *slog.Logger, err error, reason string) error {
	if !errors.Is(err, ports.ErrOperationFinished) {
		return err
	}
	attrs := []any{"error", domain.SanitizeError(err)}
	if reason != "" {
		attrs = append(attrs, "dropped_reason", reason)
	}
	log.Info(h.job.Noun+" finished by a concurrent delivery, this delivery's outcome dropped", attrs...)
	return nil
}

// verdict sorts an error of Call: the reason the task fails with, or the
// error to return so the message is delivered again.
func (h *Handler[J, W, R]) verdict(ctx context.Context, log *slog.Logger, err error) (string, error) {
	var retry retryError
	var fail *failure
	switch {
	case errors.As(err, &retry):
		return "", retry.err
	case errors.As(err, &fail):
		return fail.reason, nil
	case ctx.Err() != nil:
		return "", err // our own stop, not the external system's fault
	case platformerr.Retryable(ctx, err):
		// The external system's own transient failure: the worker counts it
		// toward its destination's breaker, not against the job.
		log.Warn(h.job.External+" unavailable, "+h.job.Noun+" will be retried", "error", domain.SanitizeError(err))
		return "", platformerr.Upstream(err)
	}
	log.Error(h.job.External+" refused the "+h.job.Noun, "error", domain.SanitizeError(err))
	return platformerr.Reason(h.job.Refused, err), nil
}

// Retry marks an error of Call that is returned as it is, whatever its
// code, so the message is delivered again: a keyring or object store
// failure that is ours to fix, not the user's. Call logs it.
func Retry(err error) error { return retryError{err: err} }

type retryError struct{ err error }

func (e retryError) Error() string { return e.err.Error() }
func (e retryError) Unwrap() error { return e.err }

// Fail is what Call returns to end the task failed with reason, which is
// shown to users and so must be safe (sanitized, no credentials).
func Fail(reason string) error { return &failure{reason: reason} }

type failure struct{ reason string }

func (f *failure) Error() string { return f.reason }

// OnRow is Begin and End for a task type whose row keeps the task's state
// (TaskRow): Prepare reads, in step 1, what the call needs (a reason ends
// the task failed instead); Record stores a success in step 3 (the task's
// own fields, saved; the operation is ended succeeded here).
type OnRow[J, T any, S ~string, W, R any] struct {
	Task    TaskRow[T, S]
	Prepare func(ctx context.Context, tx ports.Tx, log *slog.Logger, row T) (w W, reason string, err error)
	Record  func(ctx context.Context, tx ports.Tx, log *slog.Logger, row T, out R, now time.Time) error
}

// Begin is step 1 of Job over a task row.
func (o OnRow[J, T, S, W, R]) Begin(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], now time.Time) (w W, proceed bool, err error) {
	op, row, err := o.Task.Load(ctx, tx, run.OperationID, run.TaskID)
	if err != nil {
		return w, false, err
	}
	if o.Task.Finished(op, row) {
		log.Info(run.Noun+" already finished: duplicate delivery", "status", o.status(row))
		return w, false, nil
	}
	if op.CancelRequested() {
		log.Info(run.Noun + " cancelled by a user while it ran: stopped before calling again")
		return w, false, o.Task.Stop(ctx, tx, op, row, now)
	}
	if o.Prepare != nil {
		var reason string
		if w, reason, err = o.Prepare(ctx, tx, log, row); err != nil {
			return w, false, err
		}
		if reason != "" {
			log.Warn(run.Noun+" cannot run, failed", "reason", reason)
			return w, false, o.Task.End(ctx, tx, op, row, reason, now)
		}
	}
	return w, true, o.Task.Start(ctx, tx, op, row, now)
}

// End is step 3 of Job over a task row.
func (o OnRow[J, T, S, W, R]) End(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], out R, reason string, now time.Time) error {
	op, row, err := o.Task.Load(ctx, tx, run.OperationID, run.TaskID)
	if err != nil {
		return err
	}
	if o.Task.Finished(op, row) {
		log.Info(run.Noun+" finished by a concurrent delivery", "status", o.status(row))
		return nil
	}
	if reason != "" {
		log.Info(run.Noun+" failed", "reason", reason)
		return o.Task.End(ctx, tx, op, row, reason, now)
	}
	if err := o.Record(ctx, tx, log, row, out, now); err != nil {
		return err
	}
	op.Succeed(now)
	return SaveEnded(ctx, tx, op)
}

// Stop is Job.Stop over a task row: the job ends cancelled unless a
// concurrent delivery finished it.
func (o OnRow[J, T, S, W, R]) Stop(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], now time.Time) error {
	op, row, err := o.Task.Load(ctx, tx, run.OperationID, run.TaskID)
	if err != nil || o.Task.Finished(op, row) {
		return err
	}
	return o.Task.Stop(ctx, tx, op, row, now)
}

func (o OnRow[J, T, S, W, R]) status(row T) S {
	status, _, _ := o.Task.State(&row)
	return *status
}

// OnOperation is Begin and End for a task type that is one operation on a
// longer-lived row (a store's verification, a media's processing): the
// operation alone says whether the job is done, and the row may have moved
// on without it (gone, replaced, settled by another operation). The row is
// what Call works on.
type OnOperation[J, T, R any] struct {
	// Kind is the kind of the operations that track the jobs.
	Kind string
	// Check reads the row for an unfinished operation, in step 1 and again
	// in step 3. done means Check ended op itself (EndOperation) and there
	// is nothing more to do.
	Check func(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], op model.Operation, now time.Time) (row T, done bool, err error)
	// Record saves the outcome on the row in step 3: out on success, reason
	// on a failure; the operation is ended with it here.
	Record func(ctx context.Context, tx ports.Tx, log *slog.Logger, row T, out R, reason string, now time.Time) error
}

// Begin is step 1 of Job over an operation.
func (o OnOperation[J, T, R]) Begin(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], now time.Time) (row T, proceed bool, err error) {
	op, done, err := o.load(ctx, tx, log, run, "operation already finished: duplicate delivery")
	if err != nil || done {
		return row, false, err
	}
	if row, done, err = o.Check(ctx, tx, log, run, op, now); err != nil || done {
		return row, false, err
	}
	if op.CancelRequested() {
		log.Info("operation cancelled by a user while it ran: stopped before calling again")
		return row, false, o.stop(ctx, tx, log, op, row, now)
	}
	if op.Status != model.OperationRunning { // else a redelivery after a failed attempt
		op.Start(now)
		if err := tx.Operations().Update(ctx, op); err != nil {
			return row, false, err
		}
	}
	run.keepStarted(op)
	return row, true, nil
}

// End is step 3 of Job over an operation. The operation is the one Begin
// committed running in this delivery, not read again: whether a
// concurrent delivery (or a cancel) ended it since is decided by the
// operation's update itself (ports.ErrOperationFinished, which rolls this
// transaction back, the row's changes with it; Handler drops the
// outcome), as it would be for an end committed between a read and the
// update. The row is read again: it may have moved on during the call.
func (o OnOperation[J, T, R]) End(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], out R, reason string, now time.Time) error {
	op, ok := run.begun()
	if !ok {
		var done bool
		var err error
		if op, done, err = o.load(ctx, tx, log, run, "operation finished by a concurrent delivery"); err != nil || done {
			return err
		}
	}
	row, done, err := o.Check(ctx, tx, log, run, op, now)
	if err != nil || done {
		return err
	}
	if err := o.Record(ctx, tx, log, row, out, reason, now); err != nil {
		return err
	}
	if reason != "" {
		return EndOperation(ctx, tx, op, reason, now)
	}
	op.Succeed(now)
	return SaveEnded(ctx, tx, op)
}

// keepStarted keeps op, running, for step 3 of this delivery: Begin's
// transaction is about to commit it (Handler goes on to Call only if it
// did).
func (r Run[J]) keepStarted(op model.Operation) {
	if r.started != nil {
		r.started.op, r.started.ok = op, true
	}
}

// begun is the operation Begin committed running in this delivery, if it
// did.
func (r Run[J]) begun() (model.Operation, bool) {
	if r.started == nil || !r.started.ok {
		return model.Operation{}, false
	}
	return r.started.op, true
}

// stop records on row that the job stopped, and ends op cancelled.
func (o OnOperation[J, T, R]) stop(ctx context.Context, tx ports.Tx, log *slog.Logger, op model.Operation, row T, now time.Time) error {
	var none R
	if err := o.Record(ctx, tx, log, row, none, ReasonStopped, now); err != nil {
		return err
	}
	op.Cancel(now)
	return SaveEnded(ctx, tx, op)
}

func (o OnOperation[J, T, R]) load(ctx context.Context, tx ports.Tx, log *slog.Logger, run Run[J], finished string) (model.Operation, bool, error) {
	op, err := Operation(ctx, tx, run.OperationID, o.Kind, run.TaskID)
	if err != nil {
		return op, false, err
	}
	if op.Finished() {
		log.Info(finished, "status", op.Status)
		return op, true, nil
	}
	return op, false, nil
}

// EndOperation ends op failed with reason (sanitized here), in tx.
func EndOperation(ctx context.Context, tx ports.Tx, op model.Operation, reason string, now time.Time) error {
	op.Fail(domain.SanitizeText(reason), now)
	domain.ReportOperationFailed(ctx)
	return SaveEnded(ctx, tx, op)
}
