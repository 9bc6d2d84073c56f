package dispatch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Deps are what a Dispatcher works with. Signal, Logger and Observer may be
// nil: no wake-ups (polling only), no logs, no metrics.
type Deps struct {
	UnitOfWork ports.UnitOfWork
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
	disc     ports.OutboxDiscovery
	pub      ports.Publisher
	signal   ports.DispatchSignal
	clock    ports.Clock
	log      *slog.Logger
	observer Observer

	mu sync.Mutex
	// cursor is where the next round's discovery starts (see dueWorkspaces),
	// so no workspace is always served first or never served.
	cursor uuid.UUID
}

// Result counts what one round did. Published are events the broker
// accepted; Failed those whose publish failed and were released for a later
// attempt; DeadLettered those parked after their last attempt.
type Result struct {
	Published    int
	Failed       int
	DeadLettered int
}

func (r *Result) add(o Result) {
	r.Published += o.Published
	r.Failed += o.Failed
	r.DeadLettered += o.DeadLettered
}

// New builds a Dispatcher; CodeValidation if cfg cannot work or a required
// dependency is missing.
func New(cfg Config, deps Deps) (*Dispatcher, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if deps.UnitOfWork == nil || deps.Discovery == nil || deps.Publisher == nil || deps.Clock == nil {
		return nil, domain.Errorf(domain.CodeValidation, "dispatcher needs a unit of work, a discovery, a publisher and a clock")
	}
	d := &Dispatcher{
		cfg: cfg, uow: deps.UnitOfWork, disc: deps.Discovery, pub: deps.Publisher,
		signal: deps.Signal, clock: deps.Clock, log: deps.Logger, observer: deps.Observer,
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.log = d.log.With("component", "dispatcher", "owner", cfg.Owner)
	if d.observer == nil {
		d.observer = NopObserver{}
	}
	return d, nil
}

// RunOnce runs one round: it asks which workspaces have due events and
// serves each of them in turn, at most Batch events per workspace, so one
// busy workspace cannot starve the others. A failure in one workspace is
// logged and the round goes on with the next; the failures are returned
// together at the end.
func (d *Dispatcher) RunOnce(ctx context.Context) (Result, error) {
	res, _, err := d.round(ctx)
	return res, err
}

// round is RunOnce that also tells whether some workspace gave a full
// batch, published successfully: then more is probably due right away.
func (d *Dispatcher) round(ctx context.Context) (Result, bool, error) {
	var res Result
	workspaces, err := d.dueWorkspaces(ctx)
	if err != nil {
		return res, false, err
	}
	var errs []error
	more := false
	for _, ws := range workspaces {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		r, full, err := d.dispatchWorkspace(ctx, ws)
		res.add(r)
		more = more || full
		if err != nil {
			d.log.Error("dispatching a workspace failed", "workspace", ws, "error", domain.SanitizeError(err))
			errs = append(errs, err)
		}
	}
	return res, more, errors.Join(errs...)
}

// dueWorkspaces asks for the next WorkspacesPerRound due workspaces after
// the cursor, wrapping around to the start, and moves the cursor. When every
// due workspace fits in the round, the cursor moves past the first one, so
// the next round starts one further on; when they do not fit, it moves past
// the last one served, so workspaces beyond the round's limit get their turn
// next and none is starved however many are due.
func (d *Dispatcher) dueWorkspaces(ctx context.Context) ([]uuid.UUID, error) {
	d.mu.Lock()
	after := d.cursor
	d.mu.Unlock()
	now, limit := d.clock.Now(), d.cfg.WorkspacesPerRound
	ws, err := d.disc.WorkspacesWithDueEvents(ctx, now, after, limit)
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
// workspace. The claim commits on its own so it is visible (and its locks
// released) before the broker is called; the broker is never called inside
// a transaction. full reports a full batch published successfully.
func (d *Dispatcher) dispatchWorkspace(ctx context.Context, ws uuid.UUID) (res Result, full bool, err error) {
	var claimed []domain.OutboxEvent
	err = d.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		claimed, err = tx.OutboxDispatch().ClaimDue(ctx, d.cfg.Owner, d.clock.Now(), d.cfg.Lease, d.cfg.Batch)
		return err
	})
	if err != nil || len(claimed) == 0 {
		return res, false, err
	}

	pubErr := d.publish(ctx, claimed)
	if pubErr == nil {
		res.Published = len(claimed)
		d.observer.Published(claimed, d.clock.Now())
		return res, len(claimed) >= d.cfg.Batch, d.markDispatched(ctx, ws, claimed)
	}
	if ctx.Err() != nil {
		// Shutting down: the publish was cut short, not refused. Leave the
		// claim to expire rather than count an attempt against the events.
		return res, false, pubErr
	}
	d.log.Warn("publish failed", "workspace", ws, "events", len(claimed), "error", domain.SanitizeError(pubErr))
	res, err = d.settleFailure(ctx, ws, claimed, pubErr)
	return res, false, err
}

// publish hands the events to the broker in one call, bounded so that it
// usually ends well inside the lease (a publish outliving the lease lets
// another instance deliver the same events again).
func (d *Dispatcher) publish(ctx context.Context, events []domain.OutboxEvent) error {
	msgs := make([]ports.Message, len(events))
	for i, e := range events {
		msgs[i] = ports.Message{
			ID:          e.ID,
			Type:        e.Type,
			WorkspaceID: e.WorkspaceID,
			Payload:     []byte(e.Payload),
			Traceparent: e.Traceparent,
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Lease*2/3)
	defer cancel()
	return d.pub.Publish(ctx, msgs...)
}

// markDispatched records the delivery. Fewer rows changed than claimed means
// the lease ran out and another instance took those events over: they will
// be (or were) delivered again, which at-least-once allows.
func (d *Dispatcher) markDispatched(ctx context.Context, ws uuid.UUID, events []domain.OutboxEvent) error {
	ids := make([]uuid.UUID, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	var changed int
	err := d.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		changed, err = tx.OutboxDispatch().MarkDispatched(ctx, d.cfg.Owner, ids, d.clock.Now())
		return err
	})
	if err != nil {
		// The events stay dispatching; after the lease they are delivered
		// again.
		return err
	}
	if changed < len(ids) {
		d.log.Warn("lease taken over before marking: some events will be delivered again",
			"workspace", ws, "claimed", len(ids), "marked", changed)
	}
	return nil
}

// settleFailure returns each event to pending with a backoff, or parks it
// as a dead letter once it has failed MaxAttempts times. The stored error is
// sanitized: broker errors can carry URLs and credentials.
func (d *Dispatcher) settleFailure(ctx context.Context, ws uuid.UUID, events []domain.OutboxEvent, pubErr error) (Result, error) {
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
