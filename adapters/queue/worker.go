package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// WorkerConfig tunes the worker. Zero values take the defaults below.
type WorkerConfig struct {
	// Namespace prefixes every topic (e.g. "once."). It must match the
	// Publisher's.
	Namespace string
	// Concurrency is how many jobs run at once (default
	// DefaultConcurrency): a job spends most of its life waiting on an
	// external system, holding no database connection meanwhile.
	Concurrency int
	// Destinations paces calls per destination (nil: none).
	Destinations Destinations
	// Hold is the longest wait for a destination a message spends in
	// memory (default 2s); longer waits are parked in the outbox.
	Hold time.Duration
	// OutageWait is how long a job waits, parked, for a destination (or
	// its platform) that is down before it asks again on its own (default
	// 10m); the first call to it that is answered wakes it sooner, and one
	// job per cooldown comes back to probe it.
	OutageWait time.Duration
	// MaxRetries bounds the runs of a job that fail by its own fault
	// (default 5); waits for its destination, or for a dependency of ours
	// that is unavailable, spend none.
	MaxRetries int
	// Deadlines is, per event type, how long after its commit a job keeps
	// trying transient failures; other types get DefaultDeadline.
	Deadlines       map[string]time.Duration
	DefaultDeadline time.Duration
	// InitialInterval is the first wait before a failed job runs again
	// (default 1s); it grows by Multiplier (default 2) up to MaxInterval
	// (default 30s), each wait randomized by ±RandomizationFactor (default
	// 0.5).
	InitialInterval     time.Duration
	MaxInterval         time.Duration
	Multiplier          float64
	RandomizationFactor float64
	// CloseTimeout bounds how long Close waits for running handlers
	// (default 30s).
	CloseTimeout time.Duration
	// Observer hears each job's start, retries and end, for metrics
	// (optional).
	Observer JobObserver
}

// DefaultConcurrency fills two cores with jobs that wait 200 ms on their
// external call (docs/benchmarks.md, "The work side").
const DefaultConcurrency = 256

// DefaultDeadline is how long a job keeps trying transient failures
// unless its kind says otherwise: longer than a marketplace's incident.
const DefaultDeadline = 6 * time.Hour

func (c WorkerConfig) withDefaults() WorkerConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Hold == 0 {
		c.Hold = 2 * time.Second
	}
	if c.OutageWait <= 0 {
		c.OutageWait = DefaultOutageWait
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 5
	}
	if c.DefaultDeadline == 0 {
		c.DefaultDeadline = DefaultDeadline
	}
	if c.InitialInterval == 0 {
		c.InitialInterval = time.Second
	}
	if c.MaxInterval == 0 {
		c.MaxInterval = 30 * time.Second
	}
	if c.Multiplier == 0 {
		c.Multiplier = 2
	}
	if c.RandomizationFactor == 0 {
		c.RandomizationFactor = 0.5
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = 30 * time.Second
	}
	return c
}

func (c WorkerConfig) retryPolicy() retryPolicy {
	return retryPolicy{
		maxAttempts: c.MaxRetries, deadlines: c.Deadlines, fallback: c.DefaultDeadline,
		initial: c.InitialInterval, maxInterval: c.MaxInterval, multiplier: c.Multiplier, jitter: c.RandomizationFactor,
	}
}

// Worker consumes one topic per event type and hands each message to its
// ports.MessageHandler.
//
// Every message the broker hands out waits for one of Concurrency slots
// (slots: fair between workspaces, ordered per key, paced per destination
// by the destinations). Around every handler, from the outside in: giving up,
// shutdown detection, durable waits (later), the slot, error sanitizing,
// panic recovery. A job that must wait (its destination refuses calls for
// a while, or its run failed in a way worth trying again before its
// deadline) is parked in the outbox and its message acknowledged, so no
// slot sleeps and a restart loses no wait; once its deadline or its own
// attempts are spent, or at once for a non-retryable error, the worker
// gives up on the job: ports.JobFailures records it in the database (task
// and operation failed, the event a dead letter that operators see and
// re-drive), and the message is acknowledged. If recording fails, the
// message is nacked and the broker delivers it again.
//
// The Worker borrows the subscriber: Close stops consuming but does not
// close it, its owner does after Close.
type Worker struct {
	router  *message.Router
	slots   *slots
	once    sync.Once     // starts the router, or marks a worker closed unstarted
	stopped chan struct{} // closed when the router stopped
	runErr  error         // what router.Run returned, set before stopped closes

	// Jobs running, and whether new ones may start (see Drain).
	mu         sync.Mutex
	draining   bool
	running    sync.WaitGroup
	active     atomic.Int64
	held       atomic.Int64
	handedBack atomic.Int64
}

// NewWorker builds a worker for handlers, keyed by event type.
func NewWorker(sub message.Subscriber, failures ports.JobFailures, waits ports.JobWaits, handlers map[string]ports.MessageHandler, cfg WorkerConfig, logger *slog.Logger) (*Worker, error) {
	if len(handlers) == 0 {
		return nil, errors.New("queue: worker without handlers")
	}
	if failures == nil || waits == nil {
		return nil, errors.New("queue: worker without a record of failed and waiting jobs")
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	log := NewLogger(logger)
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: cfg.CloseTimeout}, log)
	if err != nil {
		return nil, fmt.Errorf("queue: new router: %w", err)
	}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	w := &Worker{router: router, stopped: make(chan struct{}), slots: newSlots(cfg.Concurrency, cfg.Hold, cfg.Destinations, nil)}
	w.slots.outageWait = cfg.OutageWait
	// The woken come back a slot's worth per hold at most, a fraction of
	// what the slots turn over at any latency worth pacing.
	w.slots.woken = wakeParked(waits, cfg.Hold/time.Duration(cfg.Concurrency), logger, defaultWakeRetries)
	router.AddMiddleware(w.around(failures, waits, cfg, obs, logger)...)

	borrowed := reservingSubscriber{Subscriber: borrowedSubscriber{sub}, slots: w.slots}
	types := make([]string, 0, len(handlers))
	for t := range handlers {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, eventType := range types {
		if eventType == "" || handlers[eventType] == nil {
			return nil, fmt.Errorf("queue: worker handler for event type %q is missing", eventType)
		}
		router.AddConsumerHandler(eventType, Topic(cfg.Namespace, eventType), borrowed, handle(eventType, handlers[eventType]))
	}
	return w, nil
}

// around is what runs around every handler, from the outside in (see
// Worker). takeSlot classifies the run's error once (jobRun.outcome);
// later, markInterrupted, observeOutcome, giveUp and admit decide from it.
func (w *Worker) around(failures ports.JobFailures, waits ports.JobWaits, cfg WorkerConfig, obs JobObserver, logger *slog.Logger) []message.HandlerMiddleware {
	return []message.HandlerMiddleware{
		w.admit,
		giveUp(failures),
		observeOutcome(obs),
		markInterrupted,
		later(waits, cfg.retryPolicy(), time.Now, logger, &parkBackoff{initial: cfg.InitialInterval, max: cfg.MaxInterval}, w.rewake),
		w.takeSlot,
		countAttempts,
		sanitizeFailures,
		middleware.Recoverer,
	}
}

// rewake wakes workspace's jobs parked for down's outage again: one of
// them was parked as the first wake ran (waitFor.wokenBeforeParked).
func (w *Worker) rewake(down string, workspace uuid.UUID) {
	w.slots.woken(down, map[uuid.UUID]int{workspace: 1})
}

// admit is the outermost middleware: it counts the jobs running, for
// Drain, and once the worker drains holds every message that arrives
// (without running it) until Close ends its context, which hands it back
// to the broker like a job interrupted.
func (w *Worker) admit(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		w.mu.Lock()
		if w.draining {
			w.mu.Unlock()
			w.held.Add(1)
			<-msg.Context().Done()
			w.held.Add(-1)
			w.handedBack.Add(1)
			return nil, &interrupted{sanitizedError{text: "not started: the worker is stopping", cause: context.Cause(msg.Context())}}
		}
		w.running.Add(1)
		w.active.Add(1)
		w.mu.Unlock()
		defer w.running.Done()
		defer w.active.Add(-1)
		out, err := h(msg)
		if err != nil && runOf(msg).outcome.kind == kindInterrupted {
			w.handedBack.Add(1)
		}
		return out, err
	}
}

// Drain starts no job from now on and waits, at most until ctx ends, for
// the jobs running to finish (succeed, or be given up on, and be acked).
// It returns ctx's error if some are still running: Close interrupts
// them, and the broker delivers them again.
func (w *Worker) Drain(ctx context.Context) error {
	w.mu.Lock()
	w.draining = true
	w.mu.Unlock()
	w.slots.close() // what waits for a slot is handed back, not started
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// takeSlot runs the job in one of the worker's slots, once slots gives it
// one, and tells the destinations how its call went; a message that must wait for
// its destination returns the wait, for later to park. A message that
// cannot be read runs at once, to fail.
func (w *Worker) takeSlot(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		run := runOf(msg)
		reserved, _ := msg.Context().Value(reservationKey{}).(*ticket)
		m, err := FromMessage(msg)
		if err != nil {
			if reserved != nil {
				w.slots.cancel(reserved)
			}
			noteStarted(msg)
			out, err := h(msg)
			run.outcome = classify(err)
			return out, err
		}
		teach, release, wait, err := w.slots.acquireCall(msg.Context(), m.WorkspaceID, m.Destination, m.OrderingKey, reserved)
		if err != nil {
			err = &interrupted{sanitizedError{text: "not started: the worker is stopping", cause: err}}
			run.outcome = classify(err)
			return nil, err
		}
		if wait != nil {
			run.outcome = classify(wait)
			return nil, wait
		}
		noteStarted(msg)
		msg.SetContext(domain.WithOrderingKey(msg.Context(), m.OrderingKey))
		out, err := h(msg)
		run.outcome = classify(err)
		result := run.outcome.call
		if domain.NoCallReported(msg.Context()) {
			result = CallResult{Abandoned: true} // nothing to learn, the probe (if it was one) released
		}
		if result.Throttled {
			teach(result) // now, not once the job is parked (acquireCall)
		}
		if err != nil && hold(run, release, result) {
			return out, err // later lets the slot go once it knows whether the job is parked
		}
		release(result)
		// A job that ended without a call may be the redelivery of one
		// whose call was answered, its worker killed before the wake of
		// its workspace's sleepers ran: it wakes them (no more than
		// bringing them back to the gate), or nothing would.
		endedBefore := err == nil && domain.NoCallReported(msg.Context())
		if (endedBefore || !result.Failed && !result.Abandoned) && m.Destination != "" {
			w.slots.answeredAfterWait(m.WorkspaceID, m.Destination, m.WaitKind, m.WaitedFor)
		}
		return out, err
	}
}

// Slots are the worker's slot gauges: jobs running now, the most that ever
// ran at once (never more than Concurrency), and messages waiting for a
// slot.
func (w *Worker) Slots() (running, peak, waiting int) { return w.slots.stats() }

// Running is how many jobs are running now.
func (w *Worker) Running() int { return int(w.active.Load()) }

// Held is how many messages arrived while draining and wait, not run, for
// Close to hand them back.
func (w *Worker) Held() int { return int(w.held.Load()) }

// HandedBack is how many messages the worker left to the broker to
// deliver again because it was stopping.
func (w *Worker) HandedBack() int { return int(w.handedBack.Load()) }

// handle adapts a ports.MessageHandler to watermill.
func handle(eventType string, h ports.MessageHandler) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		m, err := FromMessage(msg)
		if err != nil {
			return err
		}
		if m.Type == "" {
			m.Type = eventType
		}
		return h.Handle(msg.Context(), m)
	}
}

// Run starts consuming and returns once every subscription is running, or
// with the error that prevented it (an unreachable broker). ctx bounds the
// start only: the worker runs until Close, so an fx OnStart context can be
// passed as is. A worker runs once.
func (w *Worker) Run(ctx context.Context) error {
	first := false
	w.once.Do(func() {
		first = true
		go func() {
			w.runErr = w.router.Run(context.WithoutCancel(ctx))
			close(w.stopped)
		}()
	})
	if !first {
		return errors.New("queue: worker already started or closed")
	}
	select {
	case <-w.router.Running():
		return nil
	case <-w.stopped:
		err := w.runErr
		if err == nil {
			err = errors.New("stopped before running")
		}
		return fmt.Errorf("queue: worker: %w", err)
	case <-ctx.Done():
		_ = w.Close()
		return fmt.Errorf("queue: worker start: %w", context.Cause(ctx))
	}
}

// Consuming reports whether every subscription is running and the worker
// has not stopped: false while Run is still subscribing, after a failed
// start and after Close.
func (w *Worker) Consuming() bool {
	select {
	case <-w.stopped:
		return false
	default:
	}
	select {
	case <-w.router.Running():
		return true
	default:
		return false
	}
}

// Close stops consuming and waits, up to CloseTimeout, for the handlers
// that are running. Their messages' contexts end; a message interrupted so
// is not given up on but left for the broker to deliver again. Close is
// idempotent.
func (w *Worker) Close() error {
	ran := true
	w.once.Do(func() { ran = false; close(w.stopped) })
	if !ran {
		return nil
	}
	select {
	case <-w.stopped:
		// Run failed, or the router stopped by itself; either way its
		// subscriptions ended with Run's context. Closing the router now
		// would wait CloseTimeout for handlers that never started.
		return nil
	default:
	}
	err := w.router.Close()
	<-w.stopped
	if err != nil {
		return fmt.Errorf("queue: close worker: %w", err)
	}
	return nil
}

// reservingSubscriber reserves, for each message with an ordering key,
// its place in the key's line as the broker hands it out, in the broker's
// order: the router then runs each message in a goroutine of its own,
// which may reach the slots out of that order.
type reservingSubscriber struct {
	message.Subscriber
	slots *slots
}

type reservationKey struct{}

func (r reservingSubscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	in, err := r.Subscriber.Subscribe(ctx, topic)
	if err != nil {
		return nil, err
	}
	out := make(chan *message.Message)
	go func() {
		defer close(out)
		for msg := range in {
			var reserved *ticket
			if key := msg.Metadata.Get(MetadataOrderingKey); key != "" {
				reserved = r.slots.reserve(key)
				msg.SetContext(context.WithValue(msg.Context(), reservationKey{}, reserved))
			}
			select {
			case out <- msg:
			case <-ctx.Done():
				if reserved != nil {
					r.slots.cancel(reserved)
				}
				return
			}
		}
	}()
	return out, nil
}

// borrowedSubscriber keeps the router from closing a subscriber it does not
// own (the router closes its subscribers on Close). Subscriptions still end:
// the router cancels their contexts.
type borrowedSubscriber struct{ message.Subscriber }

func (borrowedSubscriber) Close() error { return nil }
