package queue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

// jobLog records what a JobObserver hears.
type jobLog struct {
	mu       sync.Mutex
	inFlight map[string]int
	retries  map[string]int
	ended    map[string]string
}

func (l *jobLog) JobStarted(t string) { l.mu.Lock(); l.inFlight[t]++; l.mu.Unlock() }
func (l *jobLog) JobRetried(t string) { l.mu.Lock(); l.retries[t]++; l.mu.Unlock() }
func (l *jobLog) JobEnded(t, outcome string, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight[t]--
	l.ended[t] = outcome
}

func (l *jobLog) snapshot() (map[string]int, map[string]int, map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	copyOf := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	ended := map[string]string{}
	for k, v := range l.ended {
		ended[k] = v
	}
	return copyOf(l.inFlight), copyOf(l.retries), ended
}

// The observer hears each job's runs, by type: how the last one ended,
// and each failed run parked to run again.
func TestWorkerObserverHearsOutcomesAndRetries(t *testing.T) {
	pub, sub := memqueue.New(memqueue.Config{})
	defer pub.Close()
	var flakyCalls int
	handlers := map[string]ports.MessageHandler{
		"ok": nop,
		"flaky": ports.MessageHandlerFunc(func(context.Context, ports.Message) error {
			if flakyCalls++; flakyCalls < 3 {
				return domain.Errorf(domain.CodeUnavailable, "not yet")
			}
			return nil
		}),
		"bad": ports.MessageHandlerFunc(func(context.Context, ports.Message) error {
			return domain.Errorf(domain.CodeValidation, "never")
		}),
		// It ran, and recorded its operation failed (credentials refused).
		"refused": ports.MessageHandlerFunc(func(ctx context.Context, _ ports.Message) error {
			domain.ReportOperationFailed(ctx)
			return nil
		}),
	}
	log := &jobLog{inFlight: map[string]int{}, retries: map[string]int{}, ended: map[string]string{}}
	w, err := queue.NewWorker(sub, dropFailures{}, republish{pub}, handlers, queue.WorkerConfig{
		InitialInterval: time.Millisecond, MaxInterval: time.Millisecond, Observer: log,
	}, queuetest.Logger(t))
	require.NoError(t, err)
	require.NoError(t, w.Run(context.Background()))
	defer w.Close()

	for eventType := range handlers {
		m := ports.Message{ID: uuid.New(), Type: eventType, WorkspaceID: uuid.New(), Payload: []byte(`{}`)}
		require.NoError(t, pub.Publish(queue.Topic("", eventType), queue.ToMessage(m)))
	}
	require.Eventually(t, func() bool {
		_, _, ended := log.snapshot()
		return len(ended) == 4
	}, 10*time.Second, 5*time.Millisecond)
	inFlight, retries, ended := log.snapshot()
	assert.Equal(t, map[string]string{
		"ok": queue.OutcomeSucceeded, "flaky": queue.OutcomeSucceeded, "bad": queue.OutcomeGivenUp, "refused": queue.OutcomeFailed,
	}, ended)
	assert.Equal(t, map[string]int{"flaky": 2}, retries)
	assert.Equal(t, map[string]int{"ok": 0, "flaky": 0, "bad": 0, "refused": 0}, inFlight)
}
