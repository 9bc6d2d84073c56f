package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Relay publishes the events a process committed itself, right after the
// commit, instead of leaving them for a Dispatcher's wake-up, claim,
// publish and mark: the original design's "the writer enqueues, the
// Dispatcher makes up for crashes".
//
// Its unit of work (UnitOfWork) writes every event held: pending, locked_by
// the relay's Holder and next_attempt_at = now + Hold. The claim takes only
// pending events whose next_attempt_at has come, so no Dispatcher touches
// a held event until the hold ends. After the commit the relay publishes
// the events through its own breaker (message id = event id, as the
// Dispatcher does), then marks them dispatched, many at once across
// requests and workspaces (ports.OutboxRelayMarks). Whatever goes wrong
// leaves the events to the Dispatchers, never lost and never charged an
// attempt:
//
//   - the process dies after the commit, or before the mark: the hold ends
//     and a Dispatcher delivers them as pending events (published again if
//     the relay had published them: at-least-once, message id = event id);
//   - the publish fails (broker unreachable, a refusal, the breaker open):
//     the relay releases them at once (hold cleared, due now, last_error
//     recorded, no attempt counted) and wakes the Dispatchers;
//   - the mark fails: the hold ends and they are published again.
//
// Why pending with a future next_attempt_at rather than the issue's
// dispatching with a lease: an expired lease counts an attempt when taken
// over (it may be a poison event that killed a Dispatcher), and a writer
// that crashed for its own reasons must not charge its events one.
type Relay struct {
	cfg      RelayConfig
	marks    ports.OutboxRelayMarks
	pub      ports.Publisher
	signal   ports.DispatchSignal
	clock    ports.Clock
	log      *slog.Logger
	observer RelayObserver
	hooks    RelayHooks
	breaker  *brokerBreaker

	// in carries each commit's events to the publishers; room holds a
	// token for each commit in in, or about to be (see hand); published
	// the broker's accepted batches to the marker.
	in        chan []model.OutboxEvent
	room      chan struct{}
	published chan []model.OutboxEvent

	mu      sync.Mutex
	running bool
	stopped chan struct{}
}

// RelayConfig tunes a Relay. Zero values take the defaults.
type RelayConfig struct {
	// Holder names this process's relay in locked_by; every process needs
	// its own (the Dispatcher's owner and a suffix, say).
	Holder string
	// Hold is how long a committed event stays the relay's before the
	// Dispatchers may deliver it. Long enough for a publish and a mark
	// under load, short enough that a crashed writer's events are not late
	// for long. Default 5s.
	Hold time.Duration
	// Batch is the most events published in one call and marked in one
	// round trip. Default 100.
	Batch int
	// Concurrency is the most publishes in flight. Default 4.
	Concurrency int
	// Backlog is the most commits waiting for a publisher; a writer that
	// finds it full waits (back pressure), or leaves its events to the
	// hold if its context ends first. Default 1024.
	Backlog int
	// BreakerFailures and BreakerOpen are the relay's circuit breaker, as
	// the Dispatcher's (Config): while it is open, events are released to
	// the Dispatchers at once without a publish. Defaults 3 and 5s.
	BreakerFailures int
	BreakerOpen     time.Duration
}

// Relay defaults.
const (
	DefaultRelayHold    = 5 * time.Second
	DefaultRelayBacklog = 1024
)

// RelayDeps are what a Relay works with. Signal, Logger, Observer and the
// hooks may be nil.
type RelayDeps struct {
	Marks     ports.OutboxRelayMarks
	Publisher ports.Publisher
	// Signal wakes the Dispatchers when the relay releases events.
	Signal   ports.DispatchSignal
	Clock    ports.Clock
	Logger   *slog.Logger
	Observer RelayObserver
	Hooks    RelayHooks
}

// RelayHooks are points in a relay's work where tests stop or kill the
// process (the crash tests' build tag sets them). Nil hooks do nothing.
type RelayHooks struct {
	// Committed runs after the business transaction committed, before the
	// events reach the relay.
	Committed func(events []model.OutboxEvent)
	// Handing runs once the relay has taken a commit's events (they have
	// room in its backlog), before they are queued for a publisher.
	Handing func(events []model.OutboxEvent)
	// Published runs after the broker accepted events, before their mark.
	Published func(events []model.OutboxEvent)
}

// RelayObserver hears what a relay did, for metrics. Calls come from
// several goroutines and must return quickly.
type RelayObserver interface {
	// Relayed reports events the broker accepted from the relay at `at`.
	Relayed(events []model.OutboxEvent, at time.Time)
	// RelayReleased reports n events handed to the Dispatchers unpublished.
	RelayReleased(n int)
	// RelayMarked reports n events the relay marked dispatched.
	RelayMarked(n int)
}

// NewRelay builds a Relay; CodeValidation if cfg cannot work or a required
// dependency is missing. Run starts it.
func NewRelay(cfg RelayConfig, deps RelayDeps) (*Relay, error) {
	if cfg.Holder == "" {
		return nil, domain.Errorf(domain.CodeValidation, "relay holder must not be empty")
	}
	if cfg.Hold < 0 || cfg.Batch < 0 || cfg.Concurrency < 0 || cfg.Backlog < 0 || cfg.BreakerFailures < 0 || cfg.BreakerOpen < 0 {
		return nil, domain.Errorf(domain.CodeValidation, "relay settings must be positive")
	}
	if deps.Marks == nil || deps.Publisher == nil || deps.Clock == nil {
		return nil, domain.Errorf(domain.CodeValidation, "relay needs marks, a publisher and a clock")
	}
	cfg.Hold = orDefault(cfg.Hold, DefaultRelayHold)
	cfg.Batch = orDefault(cfg.Batch, DefaultBatch)
	cfg.Concurrency = orDefault(cfg.Concurrency, DefaultConcurrency)
	cfg.Backlog = orDefault(cfg.Backlog, DefaultRelayBacklog)
	breaker := Config{BreakerFailures: orDefault(cfg.BreakerFailures, DefaultBreakerFailures), BreakerOpen: orDefault(cfg.BreakerOpen, DefaultBreakerOpen)}
	r := &Relay{
		cfg: cfg, marks: deps.Marks, pub: deps.Publisher, signal: deps.Signal, clock: deps.Clock,
		log: deps.Logger, observer: deps.Observer, hooks: deps.Hooks,
		in:        make(chan []model.OutboxEvent, cfg.Backlog),
		room:      make(chan struct{}, cfg.Backlog),
		published: make(chan []model.OutboxEvent, cfg.Concurrency),
		stopped:   make(chan struct{}),
		// Commits handed over before Run starts wait in the backlog.
		running: true,
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.log = r.log.With("component", "relay", "holder", cfg.Holder)
	if r.observer == nil {
		r.observer = nopRelayObserver{}
	}
	// The relay's breaker reports no broker_up: that gauge is the
	// Dispatcher's, which carries the backlog while the broker is down.
	r.breaker = newBrokerBreaker(breaker, r.log, NopObserver{}, r.clock)
	return r, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Holder is the locked_by of the events the relay holds.
func (r *Relay) Holder() string { return r.cfg.Holder }

// Run publishes and marks until ctx ends, then stops: events waiting for
// a publisher are released to the Dispatchers; batches already published
// are marked; commits that arrive afterwards are released by their
// writers (see hand).
func (r *Relay) Run(ctx context.Context) {
	var publishers, marker sync.WaitGroup
	for range r.cfg.Concurrency {
		publishers.Go(func() { r.publishLoop(ctx) })
	}
	marker.Go(r.markLoop)
	<-ctx.Done()
	r.mu.Lock()
	r.running = false
	close(r.stopped)
	r.mu.Unlock()
	publishers.Wait()
	close(r.published)
	marker.Wait()
	// Nothing is queued on in any more: hand queues only under mu, while
	// running.
	var rest []model.OutboxEvent
	for {
		select {
		case events := <-r.in:
			<-r.room
			rest = append(rest, events...)
			continue
		default:
		}
		break
	}
	r.release(context.Background(), rest, "")
}

// hand gives the relay the events of a commit. It waits while the backlog
// is full; if ctx ends first, the events are left to their hold (back
// pressure). Once the relay has stopped, it releases them to the
// Dispatchers at once rather than leave them held until the hold ends.
//
// Room in the backlog is taken first, without the lock, so that a writer
// can wait for it and still give up when its ctx ends; the queuing then
// cannot block, and happens under mu together with the check of running.
// Run clears running under mu before its final drain, so that drain finds
// every commit queued, and none is queued after it.
func (r *Relay) hand(ctx context.Context, events []model.OutboxEvent) {
	select {
	case r.room <- struct{}{}:
	case <-ctx.Done():
		return
	case <-r.stopped:
		r.release(ctx, events, "")
		return
	}
	if r.hooks.Handing != nil {
		r.hooks.Handing(events)
	}
	r.mu.Lock()
	queued := r.running
	if queued {
		r.in <- events // never blocks: the room is ours
	}
	r.mu.Unlock()
	if !queued {
		<-r.room
		r.release(ctx, events, "")
	}
}

// publishLoop takes what commits handed over, up to Batch events at a time
// (one commit's events are never split), and publishes them.
func (r *Relay) publishLoop(ctx context.Context) {
	for {
		var batch []model.OutboxEvent
		select {
		case <-ctx.Done():
			return
		case batch = <-r.in:
			<-r.room
		}
	more:
		for len(batch) < r.cfg.Batch {
			select {
			case events := <-r.in:
				<-r.room
				batch = append(batch, events...)
			default:
				break more
			}
		}
		r.publish(ctx, batch)
	}
}

// publish hands events to the broker through the breaker and passes them
// on to the marker, or releases them to the Dispatchers.
func (r *Relay) publish(ctx context.Context, events []model.OutboxEvent) {
	err := r.breaker.publish(func() error {
		// Well inside the hold: a publish that outlives it lets a
		// Dispatcher publish the same events again.
		pctx, cancel := context.WithTimeout(ctx, r.cfg.Hold*2/3)
		defer cancel()
		return r.pub.Publish(pctx, messages(events)...)
	})
	if err != nil {
		lastError := ""
		switch {
		case ctx.Err() != nil: // stopping: says nothing about the events
		case refused(err):
			// The breaker is open: the reason is the outage it saw, so an
			// operation that stays pending says why.
			if p := r.breaker.paused(); p != nil {
				lastError = domain.SanitizeError(p)
			}
		default:
			lastError = domain.SanitizeError(err)
			r.log.Warn("relay publish failed: the Dispatchers take the events over", "events", len(events), "error", lastError)
		}
		r.release(ctx, events, lastError)
		return
	}
	r.observer.Relayed(events, r.clock.Now())
	if r.hooks.Published != nil {
		r.hooks.Published(events)
	}
	r.published <- events
}

// markLoop marks published batches dispatched, as many as have piled up
// while the previous mark ran in one call (across workspaces), until the
// publishers are done.
func (r *Relay) markLoop() {
	for events := range r.published {
	more:
		for len(events) < 10*r.cfg.Batch {
			select {
			case next, ok := <-r.published:
				if !ok {
					break more
				}
				events = append(events, next...)
			default:
				break more
			}
		}
		r.mark(events)
	}
}

// settleTimeout bounds one mark or release.
const settleTimeout = 5 * time.Second

func (r *Relay) mark(events []model.OutboxEvent) {
	// Detached: a stopping relay still records what it published.
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	n, err := r.marks.MarkRelayed(ctx, r.cfg.Holder, byWorkspace(events), r.clock.Now())
	if err != nil {
		// Left held: published again once the hold ends (at-least-once).
		r.log.Error("marking relayed events failed: they are published again after the hold", "events", len(events), "error", domain.SanitizeError(err))
		return
	}
	r.observer.RelayMarked(n)
	if n < len(events) {
		r.log.Warn("hold ended before the mark: a Dispatcher delivers those events again", "events", len(events), "marked", n)
	}
}

// release hands events to the Dispatchers at once, uncounted, and wakes
// them. lastError, if not empty, replaces the events' last error.
func (r *Relay) release(ctx context.Context, events []model.OutboxEvent, lastError string) {
	if len(events) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	n, err := r.marks.ReleaseHeld(ctx, r.cfg.Holder, byWorkspace(events), r.clock.Now(), lastError)
	if err != nil {
		// Left held: the Dispatchers deliver them once the hold ends.
		r.log.Error("releasing events failed: they wait for the end of their hold", "events", len(events), "error", domain.SanitizeError(err))
		return
	}
	r.observer.RelayReleased(n)
	if r.signal != nil {
		r.signal.Committed()
	}
}

// messages are events as the queue carries them, for the relay and the
// Dispatcher alike.
func messages(events []model.OutboxEvent) []ports.Message {
	msgs := make([]ports.Message, len(events))
	for i, e := range events {
		msgs[i] = ports.MessageOf(e)
	}
	return msgs
}

func byWorkspace(events []model.OutboxEvent) map[uuid.UUID][]uuid.UUID {
	out := map[uuid.UUID][]uuid.UUID{}
	for _, e := range events {
		out[e.WorkspaceID] = append(out[e.WorkspaceID], e.ID)
	}
	return out
}

type nopRelayObserver struct{}

func (nopRelayObserver) Relayed([]model.OutboxEvent, time.Time) {}
func (nopRelayObserver) RelayReleased(int)                      {}
func (nopRelayObserver) RelayMarked(int)                        {}
