package queue

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// countedFailures counts the jobs given up on, with the attempts each
// was given up after.
type countedFailures struct {
	mu       sync.Mutex
	attempts []int
}

func (f *countedFailures) GiveUp(_ context.Context, _ ports.Message, _ error, attempts int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts = append(f.attempts, attempts)
	return nil
}

// endings records the outcome each job ended with.
type endings struct {
	nopObserver
	ended []string
}

func (e *endings) JobEnded(_ string, outcome string, _ time.Duration) {
	e.ended = append(e.ended, outcome)
}

// The middlewares outside the slot decide from the outcome the slot
// classified, as the middleware that changed the error left it: a job
// that could not be parked, or that the worker's stop cut short, is
// handed back to the broker (not given up on, heard as interrupted, and
// for a stop counted as handed back), and a wrong message is given up on
// after its one run. Every park fails here: the database is down.
func TestTheOutcomeCarriedOutwardDecidesTheMessagesEnd(t *testing.T) {
	cases := []struct {
		name       string
		run        func(cancel context.CancelFunc) error
		givenUp    []int
		ended      string
		handedBack int64
	}{
		{
			name: "the park fails",
			run: func(context.CancelFunc) error {
				return platformerr.Upstream(errors.New("shopify answered 503"))
			},
			ended: OutcomeInterrupted,
		},
		{
			name: "the worker stops during the run",
			run: func(stop context.CancelFunc) error {
				stop()
				return errors.New("read tcp: use of closed connection")
			},
			ended:      OutcomeInterrupted,
			handedBack: 1,
		},
		{
			name:    "a wrong message",
			run:     func(context.CancelFunc) error { return domain.Errorf(domain.CodeValidation, "not an order") },
			givenUp: []int{1},
			ended:   OutcomeGivenUp,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			failures, obs := &countedFailures{}, &endings{}
			w := &Worker{slots: newSlots(4, time.Second, nil, nil)}
			cfg := WorkerConfig{InitialInterval: time.Millisecond, MaxInterval: time.Millisecond}.withDefaults()
			msg := ToMessage(ports.Message{ID: uuid.New(), WorkspaceID: uuid.New(), Type: "a", Destination: "shopify/a", CreatedAt: time.Now()})
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			msg.SetContext(ctx)
			h := func(*message.Message) ([]*message.Message, error) { return nil, c.run(stop) }
			around := w.around(failures, &unreachableOutbox{}, cfg, obs, slog.New(slog.DiscardHandler))
			for i := len(around) - 1; i >= 0; i-- {
				h = around[i](h)
			}
			_, _ = h(msg)
			require.Equal(t, c.givenUp, failures.attempts, "given up on, after these attempts")
			require.Equal(t, []string{c.ended}, obs.ended)
			require.Equal(t, c.handedBack, w.handedBack.Load())
		})
	}
}
