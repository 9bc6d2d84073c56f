package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A marketplace down: its jobs are parked in the outbox, one per cooldown
// comes back to probe it and the others sleep (for an hour here, so that
// only a wake brings them back in this test); the first call it answers
// once it is back wakes them. Every job succeeds once, none spends an
// attempt or is dead-lettered, and another marketplace's jobs run
// throughout.
func TestAPlatformDownParksItsJobsUntilItAnswersAgain(t *testing.T) {
	platformDown(t, false)
}

// The same with the service stopped during the outage and started again:
// the new worker knows nothing of the jobs the old one put to sleep, and
// wakes them all the same, through the probe that comes back to it and
// says what it waited for (ports.Message.WaitedFor).
func TestAPlatformDownWakesTheJobsOfAWorkerThatIsGone(t *testing.T) {
	platformDown(t, true)
}

func platformDown(t *testing.T, restart bool) {
	ctx := context.Background()
	simURL, ledgerPath := simServer(t)
	sim := simhttp.NewAdmin(simURL)
	require.NoError(t, sim.TakeDown(ctx, "shopify"))
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, true
	cfg.SimURL, cfg.SimTimeout = simURL, 5*time.Second
	cfg.WorkOutageWait = time.Hour
	cfg.RedisClaimIdle = 2 * time.Second // what the stopped worker held comes back soon
	s := apitest.Start(t, cfg, db)

	const down = 12
	var shopify []uuid.UUID
	for i := range down {
		_, op := startTaskAndOperation(t, s, "/v1/stores", storeBody(fmt.Sprintf("down-%d-%s", i, uuid.NewString()[:8])))
		shopify = append(shopify, op)
	}
	sleeping := "shopify" // asleep for its outage
	require.Eventually(t, func() bool {
		n := 0
		for _, e := range s.Events(t) {
			if e.ParkedByWorker() && e.WaitKind == model.JobWaitOutage && e.WaitedFor == sleeping && time.Until(e.NextAttemptAt) > 30*time.Minute {
				n++
			}
		}
		return n >= down-2 // all but the probe and, perhaps, a failed probe's retry
	}, 2*time.Minute, 100*time.Millisecond, "shopify's jobs sleep while it is down")

	amazon := storeBody("up-" + uuid.NewString()[:8])
	amazon["platform"] = "amazon"
	_, op := startTaskAndOperation(t, s, "/v1/stores", amazon)
	got := s.WaitOperation(t, op, time.Minute)
	require.Equal(t, "succeeded", got.Status, "another marketplace's job runs during the outage: %s", got.Error)
	for _, op := range shopify {
		var got apitest.Operation
		s.Do(t, "GET", "/v1/operations/"+op.String(), nil, nil).JSON(t, &got)
		require.Contains(t, []string{"pending", "running"}, got.Status, "no shopify job ended while it was down")
	}

	if restart {
		s.Stop()
		again := apitest.Start(t, cfg, db)
		again.Token = again.TokenFor(t, s.Workspace, s.User)
		again.Workspace, again.User = s.Workspace, s.User
		s = again
	}
	require.NoError(t, sim.BringUp(ctx, "shopify"))
	for _, op := range shopify {
		got := s.WaitOperation(t, op, 2*time.Minute)
		require.Equal(t, "succeeded", got.Status, got.Error)
		if v := operationDelivery(t, s, op); v.Delivery != nil {
			assert.Empty(t, v.Delivery.LastError, "a succeeded job's waits on the way are not shown as its error")
		}
	}
	for _, e := range s.Events(t) {
		assert.Zero(t, e.JobAttempts, "the outage spent no attempt of %s", e.ID)
		assert.NotEqual(t, model.OutboxDeadLetter, e.Status)
	}
	ledger, err := simhttp.ReadLedger(ledgerPath)
	require.NoError(t, err)
	for _, op := range shopify {
		effects := simhttp.Select(ledger, simhttp.Filter{Kind: simhttp.KindVerify, Token: s.RequestToken(t, op), EffectsOnly: true})
		assert.Len(t, effects, 1, "one verification per store")
	}
}
