package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx/fxtest"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/redisstates"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

// The embedded store keeps the fleet's state in memory (one process); a
// deployment whose jobs go through Redis keeps it there, any other in its
// PostgreSQL.
func TestDestinationStatesLiveWhereTheDeploymentsJobsDo(t *testing.T) {
	db := pgtest.New(t)
	lc := fxtest.NewLifecycle(t)
	states := func(queue string, withDB bool) ports.DestinationStates {
		t.Helper()
		in := destinationGateIn{Lifecycle: lc, Queue: QueueConfig{Queue: queue, RedisURL: "redis://127.0.0.1:6379/0"}}
		if withDB {
			in.Database.DatabaseURL, in.DB = db.AppDSN, db.App
		}
		s, err := destinationStates(in)
		require.NoError(t, err)
		return s
	}
	assert.IsType(t, &memory.DestinationStates{}, states(QueueMemory, false))
	assert.IsType(t, &memory.DestinationStates{}, states(QueueRedis, false), "the embedded store is one process")
	assert.IsType(t, &postgres.DestinationStates{}, states(QueueAMQP, true))
	assert.IsType(t, &postgres.DestinationStates{}, states(QueueMemory, true))
	assert.IsType(t, &redisstates.States{}, states(QueueRedis, true))
	assert.IsType(t, &redisstates.States{}, states(QueueBullMQ, true))
	lc.RequireStart().RequireStop()
}

// An operator pauses a destination on one worker's ops listener and every
// worker obeys: the routes write the fleet's state, not one gate's.
func TestAPauseThroughOneWorkerHoldsEveryWorker(t *testing.T) {
	db := pgtest.New(t)
	clock := testkit.NewManualClockAt(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	worker := func() *destinations.Gate {
		g, err := newDestinationGate(WorkerConfig{WorkConcurrency: 16}, clock,
			destinationGateIn{Database: DatabaseConfig{DatabaseURL: db.AppDSN}, Queue: QueueConfig{Queue: QueueAMQP}, DB: db.App})
		require.NoError(t, err)
		return g
	}
	a, b := worker(), worker()
	shop := model.Destination{System: "shopify", Account: "paused-shop"}
	permit, _ := b.Try(shop)
	require.NotNil(t, permit)
	permit.Done(destinations.Outcome{Kind: destinations.Succeeded})

	post := func(gate *destinations.Gate, path string) int {
		mux := http.NewServeMux()
		for _, r := range destinationRoutes(gate, clock) {
			mux.Handle(r.Pattern, r.Handler)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		return rec.Code
	}
	require.Equal(t, http.StatusNoContent, post(a, "/destinations/pause?destination=shopify/paused-shop&for=10m"))
	permit, wait := b.Try(shop)
	require.Nil(t, permit, "the other worker sends no call to a paused destination")
	assert.Equal(t, destinations.WhyPaused, wait.Why)
	assert.Equal(t, clock.Now().Add(10*time.Minute), wait.Until)

	require.Equal(t, http.StatusNoContent, post(a, "/destinations/resume?destination=shopify/paused-shop"))
	clock.Advance(destinations.DefaultStateTTL) // what it read of the pause a moment ago grows stale
	permit, _ = b.Try(shop)
	assert.NotNil(t, permit, "the resume reaches it too")
	assert.Equal(t, http.StatusBadRequest, post(a, "/destinations/pause?destination=shopify/paused-shop&for=soon"))
}

// A job answered 429 by its marketplace's application-wide quota slows
// every shop of that marketplace: the job's error says whose quota it was,
// and the worker's report of the call passes it on to the gate.
func TestAnApplicationsThrottleReachesTheGateFromTheJobsError(t *testing.T) {
	clock := testkit.NewManualClockAt(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	gate, err := newDestinationGate(WorkerConfig{WorkConcurrency: 16}, clock, destinationGateIn{})
	require.NoError(t, err)
	w := workerGate{gate: gate}
	throttle := fmt.Errorf("publish: %w", &platformerr.Throttled{RetryAfter: 3 * time.Second, Scope: platformerr.ScopeApplication})

	done, refused := w.Try("amazon/shop-a")
	require.NotNil(t, done, "%+v", refused)
	done(queue.CallResultOf(throttle))

	done, refused = w.Try("amazon/shop-b")
	assert.Nil(t, done, "another shop of the marketplace waits for the application's quota too")
	assert.Equal(t, queue.Refusal{Until: clock.Now().Add(3 * time.Second), Why: queue.WhyPaced, Of: "amazon", Every: refused.Every}, refused)
	done, _ = w.Try("shopify/shop-c")
	assert.NotNil(t, done, "another marketplace does not")
}
