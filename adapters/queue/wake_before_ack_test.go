package queue

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The probe of a platform that is down, parked by this worker, reaches
// it: its call's answer wakes the workspace's sleepers, and the probe's
// handler returns (its message is acknowledged) only once that Wake has
// run. A worker killed -9 between the job's end and the Wake's commit
// (the crash test's kills come within 800 ms of the simulator's first
// answer after a restart) leaves the probe's message to come again and
// wake them from another worker; acknowledged before, nothing wakes them
// but their outage wait, ten minutes.
func TestAJobThatWaitedForAnOutageEndsOnlyOnceItsWakeRan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
		clock := now
		cooldown := now.Add(30 * time.Second)
		gate := &fakeGate{of: "shopify", refuse: map[string]time.Time{"shopify/a": cooldown}}
		s := newSlots(1, 2*time.Second, gate, func() time.Time { return clock }) // read under s.mu
		commit := make(chan struct{})
		var woken []string
		s.woken = func(d string, _ map[uuid.UUID]int) { <-commit; woken = append(woken, d) }
		ws := uuid.New()
		probe := acquireAsync(s, context.Background(), ws, "shopify/a", "")
		<-probe.done
		sleeper := acquireAsync(s, context.Background(), ws, "shopify/a", "")
		<-sleeper.done
		require.NotNil(t, sleeper.wait)
		require.NotNil(t, sleeper.wait.asleep, "the second sleeps")

		gate.mu.Lock()
		delete(gate.refuse, "shopify/a")
		gate.mu.Unlock()
		s.mu.Lock()
		clock = probe.wait.until // the probe comes back
		s.mu.Unlock()
		w := &Worker{slots: s}
		succeeds := func(*message.Message) ([]*message.Message, error) { return nil, nil }
		ended := make(chan error, 1)
		go func() {
			_, err := w.takeSlot(succeeds)(ToMessage(ports.Message{ID: uuid.New(), WorkspaceID: ws, Type: "a", Destination: "shopify/a",
				CreatedAt: now, WaitKind: probe.wait.wait.Kind, WaitedFor: probe.wait.wait.For}))
			ended <- err
		}()
		synctest.Wait()
		endedFirst := len(ended) > 0
		close(commit)
		require.NoError(t, <-ended)
		synctest.Wait()
		assert.False(t, endedFirst, "the probe's message is acknowledged before the Wake of the sleepers ran")
		assert.Equal(t, []string{"shopify"}, woken)
	})
}

// A job that waited for an outage and comes again after its operation
// ended (its worker was killed -9 after the job's end, before the Wake
// of its workspace's sleepers committed or its message was acknowledged)
// makes no call, and still wakes them: its first delivery's call was
// answered, and no other job may be left to say so. The Wake only brings
// them back to the gate, which decides whether they call.
func TestADuplicateOfAJobThatWaitedForAnOutageWakesItsWorkspace(t *testing.T) {
	for _, c := range []struct {
		name      string
		kind      model.JobWaitKind
		handlerOK bool
		want      []string
	}{
		{"ended before, parked for its platform", model.JobWaitOutage, true, []string{"shopify"}},
		{"ended before, retried after its shop failed", model.JobWaitRetry, true, []string{"shopify", "shopify/a"}},
		{"ended before, paced", model.JobWaitPaced, true, nil},
		{"no call, failed", model.JobWaitOutage, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				waits := &countedWakes{}
				w := wakingWorker(waits)
				duplicate := func(msg *message.Message) ([]*message.Message, error) {
					domain.ReportNoCall(msg.Context()) // Begin found the operation ended
					if !c.handlerOK {
						return nil, domain.Errorf(domain.CodeUnavailable, "the database is down")
					}
					return nil, nil
				}
				waitedFor := "shopify"
				if c.kind != model.JobWaitOutage {
					waitedFor = "shopify/a"
				}
				msg := ToMessage(ports.Message{ID: uuid.New(), WorkspaceID: uuid.New(), Type: "a",
					Destination: "shopify/a", CreatedAt: time.Now(), WaitKind: c.kind, WaitedFor: waitedFor})
				ctx, _ := domain.WithJobReport(msg.Context())
				msg.SetContext(ctx)
				_, err := w.takeSlot(duplicate)(msg)
				require.Equal(t, c.handlerOK, err == nil)
				synctest.Wait()
				assert.Equal(t, c.want, waits.wokenFor())
			})
		})
	}
}
