package queue_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/testkit"
)

// gateOf adapts a destinations.Gate to the worker's queue.Destinations, as the
// application does, and hands each call's result to ended once the gate
// learnt it.
type gateOf struct {
	gate  *destinations.Gate
	ended chan queue.CallResult
}

func (g gateOf) Try(destination string) (func(queue.CallResult), queue.Refusal) {
	permit, wait := g.gate.Try(model.ParseDestination(destination))
	if permit == nil {
		return nil, queue.Refusal{Until: wait.Until, Why: string(wait.Why), Of: wait.Of.String(), Every: wait.Every}
	}
	return func(r queue.CallResult) {
		o := destinations.Outcome{Kind: destinations.Succeeded}
		switch {
		case r.Throttled:
			o = destinations.Outcome{Kind: destinations.Throttled, RetryAfter: r.RetryAfter}
		case r.Failed:
			o = destinations.Outcome{Kind: destinations.Failed}
		case r.Abandoned:
			o = destinations.Outcome{Kind: destinations.Abandoned}
		}
		permit.Done(o)
		g.ended <- r
	}, queue.Refusal{}
}

// A job that calls nothing (here a duplicate delivery of a job whose
// operation already ended: its first step finds it finished) while it
// holds its destination's half-open probe teaches the gate nothing: the
// breaker stays open and the probe goes to the next job, which will
// call. Counted as an answer, it would close the breaker of a
// destination still down and let the backlog rush it.
func TestAJobThatMadeNoCallLeavesTheBreakerAsItWas(t *testing.T) {
	shop := model.Destination{System: "shop", Account: "a"}
	clock := testkit.NewManualClock()
	gate := destinations.NewGate(destinations.Config{Breaker: destinations.BreakerConfig{Failures: 1, Cooldown: 5 * time.Second}}, clock, memory.NewDestinationStates())
	down, _ := gate.Try(shop)
	require.NotNil(t, down)
	down.Done(destinations.Outcome{Kind: destinations.Failed})
	clock.Advance(5 * time.Second)
	require.Equal(t, destinations.BreakerHalfOpen, breakerOf(t, gate, shop))

	// The job's operation succeeded at its first delivery.
	uow := memory.NewUnitOfWork(memory.NewDB())
	ws, store := uuid.New(), uuid.New()
	op := model.Operation{ID: uuid.New(), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationSucceeded,
		ResourceType: "store", ResourceID: store, CreatedBy: uuid.New(), CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
	event, err := model.NewOutboxEvent(uuid.New(), ws, model.EventStoreCredentialsVerify, "store", store,
		model.StoreCredentialsVerify{StoreID: store, CredentialVersion: 1, JobOperation: model.JobOperation{OperationID: op.ID}}, clock.Now())
	require.NoError(t, err)
	event.Destination = shop.String()
	require.NoError(t, uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Operations().Create(ctx, op); err != nil {
			return err
		}
		return tx.Outbox().Append(ctx, event) // a worker runs only the outbox's events
	}))
	called := false
	handler := jobs.NewHandler(jobs.Job[model.StoreCredentialsVerify, struct{}, struct{}]{
		Event: model.EventStoreCredentialsVerify, Noun: "verification", External: "shop", Refused: "refused",
		Begin: jobs.OnOperation[model.StoreCredentialsVerify, struct{}, struct{}]{
			Kind: model.OperationStoreVerify,
			Check: func(context.Context, ports.Tx, *slog.Logger, jobs.Run[model.StoreCredentialsVerify], model.Operation, time.Time) (struct{}, bool, error) {
				return struct{}{}, false, nil
			},
		}.Begin,
		Call: func(context.Context, *slog.Logger, jobs.Run[model.StoreCredentialsVerify], struct{}) (struct{}, error) {
			called = true
			return struct{}{}, nil
		},
	}, uow, clock, nil)

	pub, sub := memqueue.New(memqueue.Config{})
	defer pub.Close()
	ended := make(chan queue.CallResult, 1)
	w, err := queue.NewWorker(sub, dropFailures{}, dropFailures{},
		map[string]ports.MessageHandler{model.EventStoreCredentialsVerify: handler},
		queue.WorkerConfig{Destinations: gateOf{gate: gate, ended: ended}}, queuetest.Logger(t))
	require.NoError(t, err)
	require.NoError(t, w.Run(t.Context()))
	defer w.Close()

	duplicate := ports.MessageOf(event)
	require.NoError(t, pub.Publish(queue.Topic("", duplicate.Type), queue.ToMessage(duplicate)))

	var result queue.CallResult
	select {
	case result = <-ended:
	case <-time.After(15 * time.Second):
		t.Fatal("the duplicate never took its destination's probe")
	}
	require.False(t, called)
	require.Equal(t, destinations.BreakerHalfOpen, breakerOf(t, gate, shop), "the destination is still down as far as anyone knows")
	require.Equal(t, queue.CallResult{Abandoned: true}, result, "no call was made: nothing to learn")
	probe, wait := gate.Try(shop)
	require.NotNil(t, probe, "the probe goes to the next job: %+v", wait)
}

func breakerOf(t *testing.T, g *destinations.Gate, d model.Destination) string {
	t.Helper()
	for _, s := range g.Snapshot() {
		if s.Destination == d.String() {
			return s.Breaker
		}
	}
	t.Fatalf("%s is not in the gate", d)
	return ""
}
