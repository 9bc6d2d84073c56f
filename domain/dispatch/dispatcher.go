package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Deps are what a Dispatcher works with. Signal, Logger and Observer may be
// nil: no wake-ups (polling only), no logs, no metrics. Claims may be nil:
// the claim and the mark then run through UnitOfWork (memory); PostgreSQL
// passes its one-round-trip claims.
type Deps struct {
	UnitOfWork ports.UnitOfWork
	Claims     ports.OutboxClaims
	Discovery  ports.OutboxDiscovery
	Publisher  ports.Publisher
	Signal     ports.DispatchSignal
	Clock      ports.Clock
	Logger     *slog.Logger
	Observer   Observer
}

// Dispatcher moves due outbox events to the queue. Any number of
// Dispatchers (with distinct owners) may run against the same database: the
// claim skips rows others hold, and every change after a claim is fenced by
// owner.
type Dispatcher struct {
	cfg      Config
	uow      ports.UnitOfWork
	claims   ports.OutboxClaims
	disc     ports.OutboxDiscovery
	pub      ports.Publisher
	signal   ports.DispatchSignal
	clock    ports.Clock
	log      *slog.Logger
	observer Observer
	breaker  *brokerBreaker

	// brokerOK says that the last publish got an answer from the broker
	// (accepted or refused the events); false at start and after one that
	// found it unreachable. Batches overlap only while it holds.
	brokerOK atomic.Bool

	mu sync.Mutex
	// cursor is where the next round's discovery starts (see dueWorkspaces),
	// so no workspace is always served first or never served.
	cursor uuid.UUID
}

// Result counts what one round did. Published are events the broker
// accepted; Failed those whose publish failed and were released for a later
// attempt; DeadLettered those parked after their last attempt; Postponed
// those handed back without an attempt counted, because the broker was
// unreachable or the Dispatcher is stopping.
type Result struct {
	Published    int
	Failed       int
	DeadLettered int
	Postponed    int
}

func (r *Result) add(o Result) {
	r.Published += o.Published
	r.Failed += o.Failed
	r.DeadLettered += o.DeadLettered
	r.Postponed += o.Postponed
}

// New builds a Dispatcher; CodeValidation if cfg cannot work or a required
// dependency is missing.
func New(cfg Config, deps Deps) (*Dispatcher, error) {
	if cfg.Owner == "" {
		return nil, domain.Errorf(domain.CodeValidation, "dispatcher owner must not be empty")
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, domain.Wrap(domain.CodeValidation, err, err.Error())
	}
	if deps.UnitOfWork == nil || deps.Discovery == nil || deps.Publisher == nil || deps.Clock == nil {
		return nil, domain.Errorf(domain.CodeValidation, "dispatcher needs a unit of work, a discovery, a publisher and a clock")
	}
	d := &Dispatcher{
		cfg: cfg, uow: deps.UnitOfWork, disc: deps.Discovery, pub: deps.Publisher,
		signal: deps.Signal, clock: deps.Clock, log: deps.Logger, observer: deps.Observer,
	}
	d.claims = deps.Claims
	if d.claims == nil {
		d.claims = uowClaims{deps.UnitOfWork}
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.log = d.log.With("component", "dispatcher", "owner", cfg.Owner)
	if d.observer == nil {
		d.observer = NopObserver{}
	}
	d.breaker = newBrokerBreaker(cfg, d.log, d.observer, d.clock)
	return d, nil
}

// Paused says why the Dispatcher is not publishing (CodeUnavailable: since
// when, the broker unreachable or misconfigured, and its last answer,
// sanitized), or nil while it publishes. It is for /readyz.
func (d *Dispatcher) Paused() error { return d.breaker.paused() }

// RunOnce runs one round: it asks which workspaces have due events and
// serves each of them, at most Batch events per workspace, so one busy
// workspace cannot starve the others; up to Concurrency batches are in
// flight at once (see flight). A failure in one workspace is logged and the
// round goes on with the others; the failures are returned together at the
// end. While the broker is unreachable (the breaker is open) a round does
// nothing; once it may probe, the round claims nothing more after a
// publish that finds the broker still unreachable. RunOnce returns when
// every batch of the round is settled.
func (d *Dispatcher) RunOnce(ctx context.Context) (Result, error) {
	f := d.newFlight()
	_, err := d.round(ctx, f)
	f.wait()
	res, errs := f.take()
	return res, errors.Join(err, errs)
}

// next is what a round tells the Run loop.
type next int

const (
	idle   next = iota // wait for a wake-up or the poll
	more               // more is probably due right away: go again
	paused             // the broker is unreachable: wait, ignoring wake-ups
)

// round claims one batch of each due workspace, each on a goroutine of its
// own holding one of f's slots, and returns once every claim of the round
// has answered: the publishes and marks go on in the background while the
// next round discovers and claims (f.wait waits for them). Its error is
// the discovery's; the batches' are in f.
func (d *Dispatcher) round(ctx context.Context, f *flight) (next, error) {
	if d.breaker.open() {
		return paused, nil
	}
	workspaces, err := d.dueWorkspaces(ctx)
	if err != nil {
		return idle, err
	}
	var claims sync.WaitGroup
	nexts := make([]next, len(workspaces))
	for i, ws := range workspaces {
		if !d.brokerOK.Load() {
			// Until a publish got an answer, one batch at a time: the
			// first that finds the broker unreachable stops the round
			// before anything more is claimed, and a probe that fails
			// leaves the broker alone for the rest of the round.
			f.wait()
			if i > 0 && !d.brokerOK.Load() && !d.breaker.closed() {
				break
			}
		}
		if d.breaker.open() || !f.acquire(ctx) {
			break
		}
		order := f.order(ws)
		claims.Add(1)
		f.batches.Add(1)
		go func() {
			defer f.batches.Done()
			defer f.release()
			defer order.done()
			defer f.recover()
			var once sync.Once
			claimed := func(n next) {
				once.Do(func() {
					nexts[i] = n
					claims.Done()
				})
			}
			defer claimed(idle) // a claim that panicked must not hold the round
			res, err := d.dispatchWorkspace(ctx, ws, order, claimed)
			f.add(res, err)
			if err != nil {
				d.log.Error("dispatching a workspace failed", "workspace", ws, "error", domain.SanitizeError(err))
			}
		}()
	}
	claims.Wait()
	after := idle
	for _, n := range nexts {
		after = max(after, n)
	}
	if d.breaker.open() {
		after = paused
	}
	return after, nil
}

// dueWorkspaces asks for the next WorkspacesPerRound due workspaces after
// the cursor, wrapping around to the start, and moves the cursor. When every
// due workspace fits in the round, the cursor moves past the first one, so
// the next round starts one further on; when they do not fit, it moves past
// the last one served, so workspaces beyond the round's limit get their turn
// next and none is starved however many are due.
func (d *Dispatcher) dueWorkspaces(ctx context.Context) (ws []uuid.UUID, err error) {
	start := time.Now()
	defer func() {
		if err == nil {
			d.observer.Discovered(time.Since(start), len(ws))
		}
	}()
	d.mu.Lock()
	after := d.cursor
	d.mu.Unlock()
	now, limit := d.clock.Now(), d.cfg.WorkspacesPerRound
	ws, err = d.disc.WorkspacesWithDueEvents(ctx, now, after, limit)
	if err != nil {
		return nil, err
	}
	if len(ws) < limit && after != uuid.Nil {
		wrapped, err := d.disc.WorkspacesWithDueEvents(ctx, now, uuid.Nil, limit-len(ws))
		if err != nil {
			return nil, err
		}
		for _, w := range wrapped {
			if bytes.Compare(w[:], after[:]) > 0 {
				break // already served from the first call
			}
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return ws, nil
	}
	d.mu.Lock()
	if len(ws) >= limit {
		d.cursor = ws[len(ws)-1]
	} else {
		d.cursor = ws[0]
	}
	d.mu.Unlock()
	return ws, nil
}

// dispatchWorkspace claims, publishes and settles one batch of one
// workspace; claimed is called once the claim answered (or failed), with
// whether more is probably due. The claim commits on its own so it is
// visible (and its locks released) before the broker is called; the broker
// is never called inside a transaction. The pending events go in one
// publish, then the taken-over one (if any) on its own, so an event that
// crashed or hung a Dispatcher cannot take the others down with it again.
// order keeps the workspace's batches in claim order: each publishes after
// the one claimed before it published, and marks after it marked.
//
// The lease runs from the claim, also while the batch waits for its turn,
// so every publish of the claim must end by one deadline counted from the
// claim (Config.publishWindow), however long the wait took: a batch whose
// turn comes too late is handed back uncounted instead of published on a
// lease about to end (see publishBatch).
func (d *Dispatcher) dispatchWorkspace(ctx context.Context, ws uuid.UUID, order *turn, claimed func(next)) (res Result, err error) {
	start := time.Now()
	now := d.clock.Now()
	claim, err := d.claims.ClaimDue(ctx, ws, d.cfg.Owner, now, d.cfg.Lease, d.cfg.Batch, d.cfg.MaxAttempts)
	claimTook := time.Since(start)
	if err != nil {
		claimed(idle)
		return res, err
	}
	n := len(claim.Events) + len(claim.TakenOver) + len(claim.DeadLettered)
	if n >= d.cfg.Batch || len(claim.TakenOver)+len(claim.DeadLettered) > 0 {
		// A full batch, or an expired lease (more may be waiting: they
		// are taken over one per claim).
		claimed(more)
	} else {
		claimed(idle)
	}
	if n == 0 {
		return res, nil
	}
	var publishTook time.Duration
	defer func() {
		d.observer.Round(RoundStats{Claimed: n, Claim: claimTook, Publish: publishTook, Total: time.Since(start)})
	}()
	if n := len(claim.DeadLettered); n > 0 {
		res.DeadLettered = n
		d.observer.DeadLettered(n)
		d.log.Error("events dead-lettered: their lease expired once too often (the dispatcher holding them crashed or hung)",
			"workspace", ws, "events", n)
		if err := d.announceLeaseDeadLetters(ctx, ws, claim.DeadLettered); err != nil {
			d.log.Error("dead letters not announced to the webhook endpoints", "workspace", ws, "events", n, "error", err)
		}
	}
	batches := make([][]model.OutboxEvent, 0, 1+len(claim.TakenOver))
	if len(claim.Events) > 0 {
		batches = append(batches, claim.Events)
	}
	for _, e := range claim.TakenOver {
		batches = append(batches, []model.OutboxEvent{e})
	}
	deadline := now.Add(d.cfg.publishWindow())
	for i, events := range batches {
		r, took, stop, err := d.publishBatch(ctx, ws, events, order, deadline)
		publishTook += took
		res.add(r)
		if err != nil || stop {
			// Hand back, uncounted, what this round will not publish.
			var rest []model.OutboxEvent
			for _, b := range batches[i+1:] {
				rest = append(rest, b...)
			}
			r, perr := d.postpone(ctx, ws, rest, "")
			res.add(r)
			return res, errors.Join(err, perr)
		}
	}
	return res, nil
}

// publishBatch publishes events in one call, through the breaker, and
// settles them: marked dispatched; released with an attempt counted (the
// failure may be theirs); or postponed uncounted when the broker is
// unreachable, this Dispatcher is stopping, or the window its wait for
// its turn left ran out (errWindowRanOut: not counted by the breaker
// either). took is the publish's time; stop reports that the claim's
// other events are to be handed back too: the broker is to be left alone
// for now (the breaker is open), or the deadline has come.
//
// The publish must end by deadline, the claim's (see dispatchWorkspace):
// it waits for its turn while at least Config.minPublishWindow is left,
// and runs with what is left. It is not published, and is handed back
// uncounted, when its turn came too late (less than that was left), or
// the workspace's batch before it was handed back (the broker did not
// take that one in time: this one would overtake its events, on even
// less time); it goes back once the batch before it has settled, so its
// events are not claimed again ahead of that one's. Waiting thus never
// costs an attempt, and no batch is with the broker when its lease ends.
func (d *Dispatcher) publishBatch(ctx context.Context, ws uuid.UUID, events []model.OutboxEvent, order *turn, deadline time.Time) (res Result, took time.Duration, stop bool, err error) {
	ok, waited := order.waitPublish(ctx, d.clock, deadline, d.cfg.minPublishWindow())
	if !ok {
		order.published(true)
		// Settle after the batch before, as a published one does: until
		// then its events may still be leased, and a claim after this
		// batch has gone would publish these ahead of them.
		order.waitSettle(ctx)
		res, err = d.postpone(ctx, ws, events, "")
		return res, 0, true, err
	}
	start := time.Now()
	pubErr := d.breaker.publish(func() error { return d.publish(ctx, events, deadline, waited) })
	took = time.Since(start)
	ranOut := errors.Is(pubErr, errWindowRanOut)
	handedBack := pubErr != nil && (ranOut || brokersFault(pubErr) || refused(pubErr) || ctx.Err() != nil)
	if !ranOut {
		d.brokerOK.Store(!handedBack)
	}
	order.published(handedBack)
	order.waitSettle(ctx)
	switch {
	case pubErr == nil:
		res.Published = len(events)
		d.observer.Published(events, d.clock.Now())
		return res, took, false, d.markDispatched(ctx, ws, events)
	case ctx.Err() != nil:
		// Shutting down: the publish was cut short, not refused. Hand the
		// events back now: left to their lease, they would cost an attempt
		// when taken over.
		res, err = d.postpone(ctx, ws, events, "")
		return res, took, false, errors.Join(pubErr, err)
	case ranOut:
		// Not the broker's fault: the wait for the turn took the time.
		res, err = d.postpone(ctx, ws, events, "")
		return res, took, true, err
	case brokersFault(pubErr) || refused(pubErr):
		lastError := ""
		if !refused(pubErr) {
			lastError = domain.SanitizeError(pubErr)
		}
		res, err = d.postpone(ctx, ws, events, lastError)
		return res, took, !d.breaker.closed(), err
	}
	d.log.Warn("publish failed", "workspace", ws, "events", len(events), "error", domain.SanitizeError(pubErr))
	res, err = d.settleFailure(ctx, ws, events, pubErr)
	return res, took, false, err
}

// publish hands the events to the broker in one call, bounded by deadline
// so that it ends well inside the lease (a publish outliving the lease lets
// another instance deliver the same events again). When the batch waited
// for its turn (shortened), a publish that outlived the deadline is
// errWindowRanOut: the broker had less time than a batch's publish window
// and may well be healthy, so it is not counted against it.
func (d *Dispatcher) publish(ctx context.Context, events []model.OutboxEvent, deadline time.Time, shortened bool) error {
	pctx, cancel := context.WithTimeout(ctx, deadline.Sub(d.clock.Now()))
	defer cancel()
	err := d.pub.Publish(pctx, messages(events)...)
	if err != nil && shortened && ctx.Err() == nil && (pctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("%w: %s", errWindowRanOut, domain.SanitizeError(err))
	}
	return err
}

// errWindowRanOut is a publish of a batch that waited for its turn and
// outlived what was left of its window (see publish).
var errWindowRanOut = errors.New("the publish window left after the wait for the turn ran out")

// postponeTimeout bounds handing events back while shutting down, when the
// round's context is already done.
const postponeTimeout = 5 * time.Second

// postpone returns claimed events to pending, due now, without counting an
// attempt: the broker is unreachable (the breaker paces the retries, not a
// backoff per event, so they go as soon as it is back) or this Dispatcher
// is stopping. lastError, if not empty, replaces the events' last error.
func (d *Dispatcher) postpone(ctx context.Context, ws uuid.UUID, events []model.OutboxEvent, lastError string) (Result, error) {
	if len(events) == 0 {
		return Result{}, nil
	}
	ctx, cancel := settling(ctx)
	defer cancel()
	n, err := d.settleClaimed(ctx, ws, events, "postponing", func(ctx context.Context, od ports.OutboxDispatch, ids []uuid.UUID) (int, error) {
		return od.Postpone(ctx, d.cfg.Owner, ids, d.clock.Now(), lastError)
	})
	// On error the events stay dispatching: after the lease they are
	// taken over.
	return Result{Postponed: n}, err
}

// settling is the context of a change that settles claimed events: ctx,
// or, once ctx is done (the Dispatcher is stopping), a detached one
// bounded by postponeTimeout, so that a stopping Dispatcher still records
// what it published and hands back what it did not, instead of leaving
// both under a lease.
func settling(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), postponeTimeout)
}

// markDispatched records the delivery, also when the Dispatcher is
// stopping (see settling). On error the events stay dispatching; after the
// lease they are delivered again.
func (d *Dispatcher) markDispatched(ctx context.Context, ws uuid.UUID, events []model.OutboxEvent) error {
	ctx, cancel := settling(ctx)
	defer cancel()
	ids := eventIDs(events)
	n, err := d.claims.MarkDispatched(ctx, ws, d.cfg.Owner, ids, d.clock.Now())
	if err != nil {
		return err
	}
	d.warnTakenOver(ws, "marking: some events will be delivered again", len(ids), n)
	return nil
}

func eventIDs(events []model.OutboxEvent) []uuid.UUID {
	ids := make([]uuid.UUID, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return ids
}

// warnTakenOver says so when fewer rows changed than were claimed: the
// lease ran out and another instance took those events over. They are its
// now (delivered again, if need be, which at-least-once allows).
func (d *Dispatcher) warnTakenOver(ws uuid.UUID, doing string, claimed, changed int) {
	if changed < claimed {
		d.log.Warn("lease taken over before "+doing, "workspace", ws, "claimed", claimed, "changed", changed)
	}
}

// settleClaimed changes the claimed events in one transaction of ws (see
// warnTakenOver).
func (d *Dispatcher) settleClaimed(ctx context.Context, ws uuid.UUID, events []model.OutboxEvent, doing string,
	change func(ctx context.Context, od ports.OutboxDispatch, ids []uuid.UUID) (int, error),
) (int, error) {
	ids := eventIDs(events)
	n, err := ports.Query(ctx, d.uow, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
		return change(ctx, tx.OutboxDispatch(), ids)
	})
	if err != nil {
		return 0, err
	}
	d.warnTakenOver(ws, doing, len(ids), n)
	return n, nil
}

// settleFailure returns each event to pending with a backoff, or parks it
// as a dead letter once this failure is its MaxAttempts-th attempt. The
// stored error is sanitized: broker errors can carry URLs and credentials.
func (d *Dispatcher) settleFailure(ctx context.Context, ws uuid.UUID, events []model.OutboxEvent, pubErr error) (Result, error) {
	var res Result
	lastError := domain.SanitizeError(pubErr)
	err := d.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		res = Result{}
		now := d.clock.Now()
		for _, e := range events {
			attempt := e.AttemptCount + 1
			var ours bool
			var err error
			if attempt >= d.cfg.MaxAttempts {
				ours, err = tx.OutboxDispatch().DeadLetter(ctx, d.cfg.Owner, e.ID, lastError)
				if ours {
					res.DeadLettered++
					err = announceDeadLetter(ctx, tx, e, now)
				}
			} else {
				next := now.Add(backoff(attempt, d.cfg.BackoffBase, d.cfg.BackoffMax))
				ours, err = tx.OutboxDispatch().Release(ctx, d.cfg.Owner, e.ID, next, lastError)
				if ours {
					res.Failed++
				}
			}
			if err != nil {
				return err
			}
			if !ours {
				d.log.Warn("lease taken over before release", "workspace", ws, "event", e.ID)
			}
		}
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	if res.Failed > 0 {
		d.observer.PublishFailed(res.Failed)
	}
	if res.DeadLettered > 0 {
		d.observer.DeadLettered(res.DeadLettered)
		d.log.Error("events dead-lettered after their last attempt", "workspace", ws, "events", res.DeadLettered)
	}
	return res, nil
}
