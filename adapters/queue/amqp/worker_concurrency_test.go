package amqp

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

// A worker on this subscriber runs as many jobs of one type at once as the
// prefetch hands it: all of them start before any finishes.
func TestWorkerRunsPrefetchJobsAtOnce(t *testing.T) {
	const prefetch = 4
	uri := amqpURL(t)
	prefix := queuetest.Prefix()
	cleanupTopics(t, uri, queue.Topic(prefix, queuetest.TypeVerify))
	raw, err := NewPublisher(Config{URL: uri}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	sub, err := NewSubscriber(Config{URL: uri, Prefetch: prefetch}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })

	started, release, finished := make(chan struct{}, prefetch), make(chan struct{}), make(chan struct{}, prefetch)
	job := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
		started <- struct{}{}
		<-release
		finished <- struct{}{}
		return nil
	})
	w, err := queue.NewWorker(sub, noGiveUps{t}, noGiveUps{t}, map[string]ports.MessageHandler{queuetest.TypeVerify: job}, queue.WorkerConfig{
		Namespace: prefix, CloseTimeout: within,
	}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })

	msgs := make([]ports.Message, prefetch)
	for i := range msgs {
		msgs[i] = ports.Message{ID: uuid.New(), Type: queuetest.TypeVerify, WorkspaceID: uuid.New(), Payload: []byte(`{}`)}
	}
	if err := queue.NewPublisher(raw, prefix).Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	for i := range prefetch {
		select {
		case <-started:
		case <-time.After(within):
			t.Fatalf("%d of %d jobs started together", i, prefetch)
		}
	}
	if n := w.Running(); n != prefetch {
		t.Fatalf("Running() = %d, want %d", n, prefetch)
	}
	close(release)
	for range prefetch {
		<-finished
	}
}

// noGiveUps fails the test if the worker gives up on a job.
type noGiveUps struct{ t *testing.T }

func (g noGiveUps) GiveUp(_ context.Context, msg ports.Message, cause error, _ int) error {
	g.t.Errorf("gave up on %s: %v", msg.ID, cause)
	return nil
}

// Defer fails the test too: no job here waits.
func (g noGiveUps) Defer(_ context.Context, msg ports.Message, _ time.Time, _ int, wait model.JobWait) error {
	g.t.Errorf("the worker parked %s: %s", msg.ID, wait.Reason)
	return nil
}

func (g noGiveUps) Wake(context.Context, uuid.UUID, model.JobWaitKind, string, time.Duration, time.Duration) (int, error) {
	return 0, nil
}
