package queuetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// NewRawPair builds, for one test, a watermill publisher and subscriber on
// the broker under test and registers their cleanup with t. Topics are
// chosen by the caller, prefix only names them.
type NewRawPair func(t *testing.T, prefix string) (message.Publisher, message.Subscriber)

// maxRetries is the worker's retry budget in the contract.
const maxRetries = 2

// RunWorkerContract checks queue.Worker on a broker: retries (parked and
// delivered again, as the outbox and its Dispatcher do), giving up
// on a job (recorded through ports.JobFailures, then acknowledged), and
// that a job given up on keeps its id.
func RunWorkerContract(t *testing.T, newPair NewRawPair) {
	t.Run("retries a failure of its own and succeeds once", func(t *testing.T) {
		var calls, successes atomic.Int32
		got := make(chan ports.Message, 1)
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			if calls.Add(1) <= 2 {
				return domain.Errorf(domain.CodeInternal, "handler tripped")
			}
			successes.Add(1)
			got <- m
			return nil
		})
		env := startWorker(t, newPair, h)
		want := freshJob()
		env.publish(t, want)

		select {
		case m := <-got:
			want.Attempts = 2 // the two failed runs, carried through the parks
			checkMessage(t, want, m)
		case <-time.After(wait):
			t.Fatalf("handler did not succeed within %s (%d calls)", wait, calls.Load())
		}
		env.failures.quiet(t, 500*time.Millisecond)
		if c, s := calls.Load(), successes.Load(); c != 3 || s != 1 {
			t.Fatalf("calls = %d, successes = %d; want 3 and 1", c, s)
		}
	})

	t.Run("waits out a dependency that is down without spending attempts", func(t *testing.T) {
		var calls atomic.Int32
		got := make(chan ports.Message, 1)
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			if calls.Add(1) <= maxRetries+1 { // more than the attempts would allow
				return domain.Errorf(domain.CodeUnavailable, "the database is failing over")
			}
			got <- m
			return nil
		})
		env := startWorker(t, newPair, h)
		want := freshJob()
		env.publish(t, want)
		select {
		case m := <-got:
			checkMessage(t, want, m) // Attempts still 0
		case <-time.After(wait):
			t.Fatalf("handler did not succeed within %s (%d calls)", wait, calls.Load())
		}
		env.failures.quiet(t, 500*time.Millisecond)
	})

	t.Run("gives up on a job that keeps failing after the retries", func(t *testing.T) {
		// The cause reaches the dead letter: it must come out sanitized.
		got := givesUp(t, newPair, 0, maxRetries+1, func() error {
			return domain.Wrap(domain.CodeInternal, errors.New("dial: password=hunter2"), "handler tripped")
		})
		if text := got.cause.Error(); text == "" || strings.Contains(text, "hunter2") {
			t.Errorf("cause = %q, want a sanitized text", text)
		}
		if !domain.IsCode(got.cause, domain.CodeInternal) {
			t.Errorf("cause code = %s, want the handler's", domain.ErrorCode(got.cause))
		}
	})

	t.Run("delivers the message again when the give-up cannot be recorded", func(t *testing.T) {
		// The database is down for the first give-up: the message comes
		// back after the failed record.
		givesUp(t, newPair, 1, 2, func() error { return domain.Errorf(domain.CodeValidation, "payload names no task") })
	})

	t.Run("gives up on a non-retryable failure without retrying", func(t *testing.T) {
		givesUp(t, newPair, 0, 1, func() error { return domain.Errorf(domain.CodeValidation, "payload names no task") })
	})

	t.Run("recovers a panicking handler and gives up after the retries", func(t *testing.T) {
		givesUp(t, newPair, 0, maxRetries+1, func() error { panic("handler bug") })
	})

	t.Run("Close interrupts a running handler without giving up on its job", func(t *testing.T) {
		entered := make(chan struct{}, 1)
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			entered <- struct{}{}
			<-ctx.Done() // a long platform call, cut short by the shutdown
			return domain.Wrap(domain.CodeUnavailable, ctx.Err(), "platform call interrupted")
		})
		env := startWorker(t, newPair, h)
		env.publish(t, newMessage(TypeVerify, 0))
		select {
		case <-entered:
		case <-time.After(wait):
			t.Fatal("handler not called")
		}
		start := time.Now()
		if err := env.worker.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Close took %s", d)
		}
		env.failures.quiet(t, 500*time.Millisecond)
	})

	t.Run("gives up on a message whose id is not an event id without calling the handler", func(t *testing.T) {
		var calls atomic.Int32
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			calls.Add(1)
			return nil
		})
		env := startWorker(t, newPair, h)
		bad := message.NewMessage("not-a-uuid", []byte("{}"))
		bad.Metadata.Set(queue.MetadataEventType, TypeVerify)
		if err := env.pub.Publish(queue.Topic(env.prefix, TypeVerify), bad); err != nil {
			t.Fatalf("publish: %v", err)
		}
		got := env.failures.take(t)
		if got.msg.ID != uuid.Nil || got.msg.Type != TypeVerify || !domain.IsCode(got.cause, domain.CodeValidation) {
			t.Errorf("given up on %+v (%v), want the unreadable message with CodeValidation", got.msg, got.cause)
		}
		if got := calls.Load(); got != 0 {
			t.Errorf("calls = %d, want 0", got)
		}
	})
}

type workerEnv struct {
	worker   *queue.Worker
	prefix   string
	pub      message.Publisher
	events   *queue.Publisher
	failures *givenUp
	waits    *parked
}

// parked stands in for the outbox and its Dispatcher: a job the worker
// parks is published again, with the attempts the worker counted, once
// its wait is over.
type parked struct {
	events *queue.Publisher
	count  atomic.Int32

	mu      sync.Mutex
	waiting map[*time.Timer]parkedJob
}

// parkedJob is a job waiting on a timer, for Wake to find.
type parkedJob struct {
	msg  ports.Message
	wait model.JobWait
}

func (p *parked) Defer(_ context.Context, msg ports.Message, until time.Time, attempts int, wait model.JobWait) error {
	p.count.Add(1)
	msg.Attempts = attempts
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = map[*time.Timer]parkedJob{}
	}
	var timer *time.Timer
	timer = time.AfterFunc(time.Until(until), func() {
		p.mu.Lock()
		delete(p.waiting, timer)
		p.mu.Unlock()
		_ = p.events.Publish(context.Background(), msg)
	})
	p.waiting[timer] = parkedJob{msg: msg, wait: wait}
	return nil
}

func (p *parked) Wake(_ context.Context, workspace uuid.UUID, kind model.JobWaitKind, waitedFor string, _, _ time.Duration) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for timer, job := range p.waiting {
		if job.msg.WorkspaceID == workspace && job.wait.Kind == kind && job.wait.For == waitedFor && timer.Stop() {
			delete(p.waiting, timer)
			_ = p.events.Publish(context.Background(), job.msg)
			n++
		}
	}
	return n, nil
}

// givenUp records the jobs the worker gives up on.
type givenUp struct {
	got chan gaveUp
	// refuse is how many GiveUp calls fail (the database is down) before
	// they succeed.
	refuse atomic.Int32
}

type gaveUp struct {
	msg      ports.Message
	cause    error
	attempts int
}

func (g *givenUp) GiveUp(_ context.Context, msg ports.Message, cause error, attempts int) error {
	if g.refuse.Add(-1) >= 0 {
		return domain.Errorf(domain.CodeUnavailable, "database unreachable")
	}
	g.got <- gaveUp{msg, cause, attempts}
	return nil
}

func (g *givenUp) take(t *testing.T) gaveUp {
	t.Helper()
	select {
	case got := <-g.got:
		return got
	case <-time.After(wait):
		t.Fatalf("the worker did not give up within %s", wait)
		return gaveUp{}
	}
}

// quiet checks that the worker gives up on nothing for d.
func (g *givenUp) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case got := <-g.got:
		t.Errorf("unexpected give-up on %s: %v", got.msg.ID, got.cause)
	case <-time.After(d):
	}
}

// startWorker runs a worker with h for TypeVerify, a handler for TypeSync
// that must never be called, fast retries, and a record of the jobs it
// gives up on.
func startWorker(t *testing.T, newPair NewRawPair, h ports.MessageHandler) *workerEnv {
	t.Helper()
	prefix := Prefix()
	pub, sub := newPair(t, prefix)
	handlers := map[string]ports.MessageHandler{
		TypeVerify: h,
		TypeSync: ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			t.Errorf("%s handler called for %s", TypeSync, m.ID)
			return nil
		}),
	}
	failures := &givenUp{got: make(chan gaveUp, 16)}
	events := queue.NewPublisher(pub, prefix)
	waits := &parked{events: events}
	w, err := queue.NewWorker(sub, failures, waits, handlers, queue.WorkerConfig{
		Namespace:       prefix,
		MaxRetries:      maxRetries,
		InitialInterval: 10 * time.Millisecond,
		MaxInterval:     50 * time.Millisecond,
		CloseTimeout:    10 * time.Second,
	}, Logger(t))
	if err != nil {
		t.Fatalf("NewWorker: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("worker Close: %v", err)
		}
	})
	// The borrowed publisher is closed by newPair's cleanup, after the
	// worker's.
	return &workerEnv{
		worker:   w,
		prefix:   prefix,
		pub:      pub,
		events:   events,
		failures: failures,
		waits:    waits,
	}
}

func (e *workerEnv) publish(t *testing.T, msgs ...ports.Message) {
	t.Helper()
	publish(t, e.events, msgs...)
}

// gaveUp waits for the worker to give up on want, checks it was handed
// over unchanged, and that it gives up on nothing more.
// givesUp starts a worker whose handler answers every call with answer,
// its give-ups refused refuse times first, publishes one message, waits
// until the worker gives up on it and checks the handler was called calls
// times. It returns the give-up.
func givesUp(t *testing.T, newPair NewRawPair, refuse int32, calls int32, answer func() error) gaveUp {
	t.Helper()
	var n atomic.Int32
	env := startWorker(t, newPair, ports.MessageHandlerFunc(func(context.Context, ports.Message) error {
		n.Add(1)
		return answer()
	}))
	env.failures.refuse.Store(refuse)
	want := freshJob()
	env.publish(t, want)
	if refuse == 0 {
		want.Attempts = int(calls) - 1 // its failed runs before the last, carried through the parks
	}
	got := env.gaveUp(t, want)
	if got := n.Load(); got != calls {
		t.Errorf("calls = %d, want %d", got, calls)
	}
	// The attempts recorded are the job's runs.
	if refuse == 0 && got.attempts != int(calls) {
		t.Errorf("attempts given up after = %d, want %d", got.attempts, calls)
	}
	return got
}

// freshJob is a job with every field set that has not failed yet.
func freshJob() ports.Message {
	m := newMessage(TypeVerify, 0)
	m.Attempts = 0
	return m
}

func (e *workerEnv) gaveUp(t *testing.T, want ports.Message) gaveUp {
	t.Helper()
	got := e.failures.take(t)
	checkMessage(t, want, got.msg)
	e.failures.quiet(t, 300*time.Millisecond)
	return got
}
