package queue

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// countedWakes is an outbox that counts the Wakes it is asked for, by
// the destination they wake.
type countedWakes struct {
	mu    sync.Mutex
	woken []string
}

func (c *countedWakes) Defer(context.Context, ports.Message, time.Time, int, model.JobWait) error {
	return nil
}

func (c *countedWakes) Wake(_ context.Context, _ uuid.UUID, _ model.JobWaitKind, waitedFor string, _, _ time.Duration) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.woken = append(c.woken, waitedFor)
	return 0, nil
}

func (c *countedWakes) wokenFor() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.woken)
	slices.Sort(out)
	return out
}

// wakingWorker is a worker whose slots wake through waits, for the jobs
// run through its takeSlot.
func wakingWorker(waits ports.JobWaits) *Worker {
	s := newSlots(4, 2*time.Second, nil, nil)
	s.woken = wakeParked(waits, time.Millisecond, slog.New(slog.DiscardHandler), defaultWakeRetries)
	return &Worker{slots: s}
}

// A job woken after its platform's outage, answered by its shop, wakes
// the platform's sleepers of its workspace, not its shop's: it was not
// parked for its shop, and nor were the others (the three-worker outage
// bench: 6,000 woken jobs fired a Wake each for their own shop, each
// finding nothing). A job parked for its shop, or retried after its
// shop failed, still wakes both: the shop that answers is up, and so is
// its platform.
func TestAnAnsweredCallWakesWhatItsJobWaitedFor(t *testing.T) {
	for _, c := range []struct {
		name      string
		kind      model.JobWaitKind
		waitedFor string
		want      []string
	}{
		{"parked for its platform", model.JobWaitOutage, "shopify", []string{"shopify"}},
		{"parked for its shop", model.JobWaitOutage, "shopify/a", []string{"shopify", "shopify/a"}},
		{"retried after its shop failed", model.JobWaitRetry, "shopify/a", []string{"shopify", "shopify/a"}},
		{"paced", model.JobWaitPaced, "shopify/a", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				waits := &countedWakes{}
				w := wakingWorker(waits)
				succeeds := func(*message.Message) ([]*message.Message, error) { return nil, nil }
				_, err := w.takeSlot(succeeds)(ToMessage(ports.Message{ID: uuid.New(), WorkspaceID: uuid.New(), Type: "a",
					Destination: "shopify/a", CreatedAt: time.Now(), WaitKind: c.kind, WaitedFor: c.waitedFor}))
				require.NoError(t, err)
				synctest.Wait() // the wakes it started are done
				assert.Equal(t, c.want, waits.wokenFor())
			})
		})
	}
}

// spreadAsked records the spread each Wake is asked for, by workspace.
type spreadAsked struct {
	countedWakes
	asked map[uuid.UUID][2]time.Duration // within, every
}

func (s *spreadAsked) Wake(ctx context.Context, ws uuid.UUID, kind model.JobWaitKind, waitedFor string, within, every time.Duration) (int, error) {
	s.mu.Lock()
	s.asked[ws] = [2]time.Duration{within, every}
	s.mu.Unlock()
	return s.countedWakes.Wake(ctx, ws, kind, waitedFor, within, every)
}

// Each workspace's Wake is asked to spread what it moves over wakeWithin,
// at most maxEvery apart, from now: the outbox counts what it moves, every
// worker's parked jobs, where this worker knows only its own (about a
// third of a three-worker fleet's: 5,892 jobs came back 7.8 ms apart over
// 46 s instead of within 30 s).
func TestAWakeIsSpreadByWhatTheOutboxMoves(t *testing.T) {
	waits := &spreadAsked{asked: map[uuid.UUID][2]time.Duration{}}
	a, b := uuid.New(), uuid.New()
	wakeParked(waits, time.Minute, slog.New(slog.DiscardHandler), defaultWakeRetries)("shopify", map[uuid.UUID]int{a: 10, b: 20})
	want := [2]time.Duration{wakeWithin, time.Minute}
	assert.Equal(t, map[uuid.UUID][2]time.Duration{a: want, b: want}, waits.asked)
}
