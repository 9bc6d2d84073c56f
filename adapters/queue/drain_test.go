package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

// A worker told to stop lets the job it runs finish, and starts none of
// the messages that arrive meanwhile: Close hands each back to the broker
// (at least once: a message handed back may come again before Close
// returns).
func TestDrainFinishesRunningJobsAndStartsNoNewOne(t *testing.T) {
	pub, sub := memqueue.New(memqueue.Config{})
	t.Cleanup(func() { _ = pub.Close() })
	started := make(chan uuid.UUID, 10)
	release := make(chan struct{})
	h := ports.MessageHandlerFunc(func(_ context.Context, m ports.Message) error {
		started <- m.ID
		<-release
		return nil
	})
	w, err := queue.NewWorker(sub, dropFailures{}, dropFailures{}, map[string]ports.MessageHandler{"a": h}, queue.WorkerConfig{}, queuetest.Logger(t))
	require.NoError(t, err)
	require.NoError(t, w.Run(context.Background()))
	publish := func() uuid.UUID {
		m := ports.Message{ID: uuid.New(), Type: "a", WorkspaceID: uuid.New(), Payload: []byte(`{}`)}
		require.NoError(t, pub.Publish(queue.Topic("", "a"), queue.ToMessage(m)))
		return m.ID
	}

	first := publish()
	require.Equal(t, first, <-started)
	assert.Equal(t, 1, w.Running())

	expired, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, w.Drain(expired), context.Canceled, "the job is still running")
	second := publish()

	drained := make(chan error, 1)
	go func() { drained <- w.Drain(context.Background()) }()
	close(release)
	require.NoError(t, <-drained, "the running job finished")
	require.Eventually(t, func() bool { return w.Held() == 1 }, 10*time.Second, time.Millisecond,
		"the message that arrived while draining waits")

	require.NoError(t, w.Close())
	// What the worker guarantees is that the message is handed back, not
	// how often: the broker may deliver it again before Close returns,
	// and the worker hands it back again each time.
	assert.GreaterOrEqual(t, w.HandedBack(), 1, "the message that arrived while draining is handed back")
	assert.Equal(t, 0, w.Held())
	select {
	case id := <-started:
		t.Fatalf("a job started while draining: %s (second %s)", id, second)
	default:
	}
}
