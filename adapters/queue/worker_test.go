package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

var nop = ports.MessageHandlerFunc(func(context.Context, ports.Message) error { return nil })

// dropFailures records no failed job.
type dropFailures struct{}

func (dropFailures) GiveUp(context.Context, ports.Message, error, int) error { return nil }

func newWorker(t *testing.T) (*queue.Worker, func() error) {
	t.Helper()
	pub, sub := memqueue.New(memqueue.Config{})
	w, err := queue.NewWorker(sub, dropFailures{}, map[string]ports.MessageHandler{"a": nop}, queue.WorkerConfig{}, queuetest.Logger(t))
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
	_ = pub.Close() // Subscribe on a closed GoChannel fails
	w, err := queue.NewWorker(sub, dropFailures{}, map[string]ports.MessageHandler{"a": nop}, queue.WorkerConfig{}, queuetest.Logger(t))
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
	if _, err := queue.NewWorker(sub, dropFailures{}, nil, queue.WorkerConfig{}, nil); err == nil {
		t.Error("no handlers accepted")
	}
	if _, err := queue.NewWorker(sub, dropFailures{}, map[string]ports.MessageHandler{"a": nil}, queue.WorkerConfig{}, nil); err == nil {
		t.Error("nil handler accepted")
	}
}
