package dispatch_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// A poison event kills (panics) or hangs (never returns, whatever the
// context says) every Dispatcher that publishes it. Each time, the
// Dispatcher is gone with the event's lease; once it expires the next one
// takes it over, which counts an attempt. After MaxAttempts the event is
// dead-lettered instead of claimed, and every other event, those claimed
// in the same batch as the poison included, is delivered.
func TestAPoisonEventEndsInDeadLetterAfterTheMaximumAttempts(t *testing.T) {
	for _, how := range []string{"panics", "hangs"} {
		t.Run(how, func(t *testing.T) {
			const maxAttempts, lease = 4, 30 * time.Second
			e := newEnv(t)
			ws, other := uuid.New(), uuid.New()
			poison := e.appendEvents(t, ws, 1)[0] // first in its batch
			mates := e.appendEvents(t, ws, 9)
			others := e.appendEvents(t, other, 5)

			hung := make(chan struct{}, 100)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			pub := &recorder{}
			pub.setFail(func(msgs []ports.Message) error {
				if !slices.ContainsFunc(msgs, func(m ports.Message) bool { return m.ID == poison }) {
					return nil
				}
				if how == "panics" {
					panic("poison event " + poison.String())
				}
				hung <- struct{}{}
				<-release // a hang that ignores its context
				return nil
			})
			// Holding the recorder's lock while hung would block the next
			// Dispatcher: publish outside it.
			poisoned := publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
				pub.mu.Lock()
				fail := pub.fail
				pub.calls++
				pub.mu.Unlock()
				if err := fail(msgs); err != nil {
					return err
				}
				pub.mu.Lock()
				defer pub.mu.Unlock()
				pub.accepted = append(pub.accepted, msgs...)
				return nil
			})

			var deadLettered int
			lives := 0
			for ; lives < 20; lives++ {
				obs := &countingObserver{}
				d, err := dispatch.New(dispatch.Config{Owner: fmt.Sprintf("dispatcher-%d", lives), Lease: lease, MaxAttempts: maxAttempts},
					dispatch.Deps{UnitOfWork: e.uow, Discovery: e.disc, Publisher: poisoned, Clock: e.clock, Observer: obs})
				require.NoError(t, err)
				died := runUntilItDies(d, hung)
				obs.mu.Lock()
				deadLettered += obs.deadLettered
				obs.mu.Unlock()
				if !died {
					break // a life with nothing left to do
				}
				e.clock.Advance(lease + time.Second)
			}

			ev := e.event(t, ws, poison)
			require.Equal(t, model.OutboxDeadLetter, ev.Status, "after %d Dispatcher lives", lives)
			assert.Equal(t, maxAttempts, ev.AttemptCount)
			assert.Equal(t, model.LeaseExpiredError(maxAttempts), ev.LastError)
			assert.Equal(t, 1, deadLettered, "the dead letter was observed")
			assert.Equal(t, maxAttempts, lives, "one Dispatcher died per attempt")

			counts := pub.countByID()
			assert.Zero(t, counts[poison], "never accepted")
			for _, id := range mates {
				ev := e.event(t, ws, id)
				assert.Equal(t, model.OutboxDispatched, ev.Status, "event %s claimed with the poison", id)
				assert.Equal(t, 1, ev.AttemptCount, "the one crash it was in")
				assert.Positive(t, counts[id])
			}
			for _, id := range others {
				ev := e.event(t, other, id)
				assert.Equal(t, model.OutboxDispatched, ev.Status)
				assert.Positive(t, counts[id])
			}
		})
	}
}

// runUntilItDies runs rounds of d until it panics or hangs (true), or until
// a round does nothing (false). A hung round is abandoned, as a process
// would be killed.
func runUntilItDies(d *dispatch.Dispatcher, hung <-chan struct{}) bool {
	type outcome int
	const (
		busy outcome = iota
		idle
		panicked
	)
	for {
		done := make(chan outcome, 1)
		go func() {
			defer func() {
				if recover() != nil {
					done <- panicked
				}
			}()
			res, _ := d.RunOnce(context.Background())
			if res == (dispatch.Result{}) {
				done <- idle
			} else {
				done <- busy
			}
		}()
		select {
		case o := <-done:
			switch o {
			case idle:
				return false
			case panicked:
				return true
			}
		case <-hung:
			return true
		}
	}
}
