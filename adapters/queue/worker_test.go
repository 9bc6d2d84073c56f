package queue_test

import (
	"context"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

var nop = ports.MessageHandlerFunc(func(context.Context, ports.Message) error { return nil })

// dropFailures records no failed job.
type dropFailures struct{}

func (dropFailures) GiveUp(context.Context, ports.Message, error, int) error { return nil }

// dropFailures parks nothing either: the tests that use it never wait.
func (dropFailures) Defer(context.Context, ports.Message, time.Time, int, model.JobWait) error {
	return nil
}

func (dropFailures) Wake(context.Context, uuid.UUID, model.JobWaitKind, string, time.Duration, time.Duration) (int, error) {
	return 0, nil
}

// republish stands in for the outbox and its Dispatcher: a job the worker
// parks is published again on pub, with the attempts counted, once its
// wait is over.
type republish struct{ pub message.Publisher }

func (r republish) Defer(_ context.Context, m ports.Message, until time.Time, attempts int, _ model.JobWait) error {
	m.Attempts = attempts
	time.AfterFunc(time.Until(until), func() { _ = r.pub.Publish(queue.Topic("", m.Type), queue.ToMessage(m)) })
	return nil
}

// Wake wakes nothing: the tests that use republish wait out every wait.
func (republish) Wake(context.Context, uuid.UUID, model.JobWaitKind, string, time.Duration, time.Duration) (int, error) {
	return 0, nil
}

func newWorker(t *testing.T) (*queue.Worker, func() error) {
	t.Helper()
	pub, sub := memqueue.New(memqueue.Config{})
	w, err := queue.NewWorker(sub, dropFailures{}, dropFailures{}, map[string]ports.MessageHandler{"a": nop}, queue.WorkerConfig{}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return w, pub.Close
}

func TestWorkerLifecycle(t *testing.T) {
	w, closeBroker := newWorker(t)
	defer closeBroker()
	if w.Consuming() {
		t.Error("consuming before Run")
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !w.Consuming() {
		t.Error("not consuming once Run returned")
	}
	if err := w.Run(context.Background()); err == nil {
		t.Error("second Run succeeded")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Consuming() {
		t.Error("consuming after Close")
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestWorkerRunKeepsRunningAfterStartContextEnds(t *testing.T) {
	w, closeBroker := newWorker(t)
	defer closeBroker()
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	cancel() // fx cancels its OnStart context once started
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- w.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung")
	}
}

func TestWorkerCloseWithoutRun(t *testing.T) {
	w, closeBroker := newWorker(t)
	defer closeBroker()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err == nil {
		t.Error("Run after Close succeeded")
	}
}

func TestWorkerRunFailsWhenSubscribeFails(t *testing.T) {
	pub, sub := memqueue.New(memqueue.Config{})
	_ = pub.Close() // Subscribe on a closed queue fails
	w, err := queue.NewWorker(sub, dropFailures{}, dropFailures{}, map[string]ports.MessageHandler{"a": nop}, queue.WorkerConfig{}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err == nil {
		t.Fatal("Run succeeded on a closed subscriber")
	}
	if w.Consuming() {
		t.Error("consuming after a failed start")
	}
	_ = w.Close()
}

func TestNewWorkerRejectsMissingHandlers(t *testing.T) {
	pub, sub := memqueue.New(memqueue.Config{})
	defer pub.Close()
	if _, err := queue.NewWorker(sub, dropFailures{}, dropFailures{}, nil, queue.WorkerConfig{}, nil); err == nil {
		t.Error("no handlers accepted")
	}
	if _, err := queue.NewWorker(sub, dropFailures{}, dropFailures{}, map[string]ports.MessageHandler{"a": nil}, queue.WorkerConfig{}, nil); err == nil {
		t.Error("nil handler accepted")
	}
}

// The worker runs as many jobs at once as its subscriber hands out: each
// handler here waits until all of them have started.
func TestWorkerRunsAsManyJobsAsTheSubscriberHandsOut(t *testing.T) {
	const jobs = 8
	pub, sub := memqueue.New(memqueue.Config{Prefetch: jobs})
	defer pub.Close()
	var started, finished sync.WaitGroup
	started.Add(jobs)
	finished.Add(jobs)
	together := make(chan struct{})
	go func() { started.Wait(); close(together) }()
	h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
		defer finished.Done()
		started.Done()
		select {
		case <-together:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	w, err := queue.NewWorker(sub, dropFailures{}, dropFailures{}, map[string]ports.MessageHandler{"a": h}, queue.WorkerConfig{}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range jobs {
		m := ports.Message{ID: uuid.New(), Type: "a", Payload: []byte(`{}`)}
		if err := pub.Publish(queue.Topic("", "a"), queue.ToMessage(m)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-together:
	case <-time.After(15 * time.Second):
		t.Fatalf("the jobs did not run at once: %d running", w.Running())
	}
	finished.Wait()
}
