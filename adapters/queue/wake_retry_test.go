package queue

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// flakyWake fails its first failures Wakes (a serialization failure after
// a cancel moved a row, a deadlock between two Wakes, a blip).
type flakyWake struct {
	mu       sync.Mutex
	failures int
	calls    int
}

func (f *flakyWake) Defer(context.Context, ports.Message, time.Time, int, model.JobWait) error {
	return nil
}

func (f *flakyWake) Wake(context.Context, uuid.UUID, model.JobWaitKind, string, time.Duration, time.Duration) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls <= f.failures {
		return 0, errors.New("ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)")
	}
	return 3, nil
}

// A Wake that fails is tried again, a few times, after a wait that grows;
// one that keeps failing is given up on (the jobs come back at their time).
func TestAFailedWakeIsTriedAgain(t *testing.T) {
	var waited []time.Duration
	retry := wakeRetries{tries: 4, initial: 100 * time.Millisecond, sleep: func(_ context.Context, d time.Duration) { waited = append(waited, d) }}
	ws := uuid.New()

	blips := &flakyWake{failures: 2}
	wakeParked(blips, time.Millisecond, slog.New(slog.DiscardHandler), retry)("shopify", map[uuid.UUID]int{ws: 3})
	assert.Equal(t, 3, blips.calls, "tried until it succeeded")
	assert.Len(t, waited, 2)

	waited = nil
	down := &flakyWake{failures: 100}
	wakeParked(down, time.Millisecond, slog.New(slog.DiscardHandler), retry)("shopify", map[uuid.UUID]int{ws: 3})
	assert.Equal(t, 4, down.calls, "bounded")
	if assert.Len(t, waited, 3) {
		assert.Greater(t, waited[2], waited[0], "the waits grow")
	}
}
