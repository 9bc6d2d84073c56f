package queuetest

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// NewRawPair builds, for one test, a watermill publisher and subscriber on
// the broker under test and registers their cleanup with t. Topics are
// chosen by the caller, prefix only names them.
type NewRawPair func(t *testing.T, prefix string) (message.Publisher, message.Subscriber)

// maxRetries is the worker's retry budget in the contract.
const maxRetries = 2

// RunWorkerContract checks queue.Worker on a broker: retries, the poison
// topic, and that a parked message keeps its id.
func RunWorkerContract(t *testing.T, newPair NewRawPair) {
	t.Run("retries a transient failure and succeeds once", func(t *testing.T) {
		var calls, successes atomic.Int32
		got := make(chan ports.Message, 1)
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			if calls.Add(1) <= 2 {
				return domain.Errorf(domain.CodeUnavailable, "platform timed out")
			}
			successes.Add(1)
			got <- m
			return nil
		})
		env := startWorker(t, newPair, h)
		want := newMessage(TypeVerify, 0)
		env.publish(t, want)

		select {
		case m := <-got:
			checkMessage(t, want, m)
		case <-time.After(wait):
			t.Fatalf("handler did not succeed within %s (%d calls)", wait, calls.Load())
		}
		env.poison.quiet(t, 500*time.Millisecond)
		if c, s := calls.Load(), successes.Load(); c != 3 || s != 1 {
			t.Fatalf("calls = %d, successes = %d; want 3 and 1", c, s)
		}
	})

	t.Run("parks a message that keeps failing in the poison topic", func(t *testing.T) {
		var calls atomic.Int32
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			calls.Add(1)
			// The reason is copied into the parked message: it must come
			// out sanitized.
			return domain.Wrap(domain.CodeUnavailable, nil, "upstream refused password=hunter2")
		})
		env := startWorker(t, newPair, h)
		want := newMessage(TypeVerify, 0)
		env.publish(t, want)

		parked := env.poisoned(t, want)
		if got := calls.Load(); got != maxRetries+1 {
			t.Errorf("calls = %d, want %d", got, maxRetries+1)
		}
		if reason := parked.Metadata.Get(middleware.ReasonForPoisonedKey); reason == "" || strings.Contains(reason, "hunter2") {
			t.Errorf("reason_poisoned = %q, want a sanitized reason", reason)
		}
		if topic := parked.Metadata.Get(middleware.PoisonedTopicKey); topic != queue.Topic(env.prefix, TypeVerify) {
			t.Errorf("topic_poisoned = %q", topic)
		}
	})

	t.Run("parks a non-retryable failure without retrying", func(t *testing.T) {
		var calls atomic.Int32
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			calls.Add(1)
			return domain.Errorf(domain.CodeValidation, "payload names no task")
		})
		env := startWorker(t, newPair, h)
		want := newMessage(TypeVerify, 0)
		env.publish(t, want)

		env.poisoned(t, want)
		if got := calls.Load(); got != 1 {
			t.Errorf("calls = %d, want 1", got)
		}
	})

	t.Run("recovers a panicking handler and parks the message after the retries", func(t *testing.T) {
		var calls atomic.Int32
		h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
			calls.Add(1)
			panic("handler bug")
		})
		env := startWorker(t, newPair, h)
		want := newMessage(TypeVerify, 0)
		env.publish(t, want)

		env.poisoned(t, want)
		if got := calls.Load(); got != maxRetries+1 {
			t.Errorf("calls = %d, want %d", got, maxRetries+1)
		}
	})

	t.Run("Close interrupts a running handler without parking its message", func(t *testing.T) {
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
		env.poison.quiet(t, 500*time.Millisecond)
	})

	t.Run("parks a message whose id is not an event id without calling the handler", func(t *testing.T) {
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
		parked := env.poison.take(t, 1)[0]
		if parked.UUID != "not-a-uuid" {
			t.Errorf("parked id = %q", parked.UUID)
		}
		if got := calls.Load(); got != 0 {
			t.Errorf("calls = %d, want 0", got)
		}
	})
}

type workerEnv struct {
	worker *queue.Worker
	prefix string
	pub    message.Publisher
	events *queue.Publisher
	poison *subscription
}

// startWorker runs a worker with h for TypeVerify, a handler for TypeSync
// that must never be called, fast retries, and a subscription to the
// poison topic.
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
	w, err := queue.NewWorker(sub, pub, handlers, queue.WorkerConfig{
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
		worker: w,
		prefix: prefix,
		pub:    pub,
		events: queue.NewPublisher(pub, prefix),
		poison: subscribe(t, sub, queue.Topic(prefix, queue.PoisonTopic)),
	}
}

func (e *workerEnv) publish(t *testing.T, msgs ...ports.Message) {
	t.Helper()
	publish(t, e.events, msgs...)
}

// poisoned waits for want in the poison topic and checks it is unchanged.
func (e *workerEnv) poisoned(t *testing.T, want ports.Message) *message.Message {
	t.Helper()
	parked := e.poison.take(t, 1)
	checkDelivered(t, []ports.Message{want}, parked)
	e.poison.quiet(t, 300*time.Millisecond)
	return parked[0]
}
