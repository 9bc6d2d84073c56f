package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/webhooktest"
)

// A receiver down (503) while operations end: the deliveries to it trip
// its endpoint's breaker and sleep in the outbox (for an hour here, so
// only a wake brings them back), a probe per cooldown finds it still
// down; once it answers again, every delivery reaches it exactly once,
// none spent an attempt and none is dead-lettered. PostgreSQL and Redis
// Streams. Restarted, the service is stopped during the outage and
// started again: the new worker knows nothing of the sleepers the old one
// parked, and the probe that comes back to it wakes them.
func TestAWebhookReceiverDownGetsEveryDeliveryOnceItIsBack(t *testing.T) {
	t.Run("same worker", func(t *testing.T) { receiverDown(t, false) })
	t.Run("restarted", func(t *testing.T) { receiverDown(t, true) })
}

func receiverDown(t *testing.T, restart bool) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, true
	cfg.FetchAllowCIDRs = "127.0.0.0/8"
	cfg.WorkOutageWait = time.Hour
	cfg.RedisClaimIdle = 2 * time.Second // what the stopped worker held comes back soon
	s := apitest.Start(t, cfg, db)

	receiver := webhooktest.NewCounter(t)
	receiver.Fail(http.StatusServiceUnavailable)
	endpoint := subscribe(t, s, receiver)

	const n = 20
	ops := make([]uuid.UUID, n)
	for i := range ops {
		ops[i] = createStore(t, s, "down-"+uuid.NewString()[:8]).Operation.ID
	}
	for _, op := range ops {
		got := s.WaitOperation(t, op, time.Minute)
		require.Equal(t, "succeeded", got.Status, "a receiver down delays no job: %s", got.Error)
	}

	sleeping := model.WebhookDestination(endpoint) // asleep for its outage
	apitest.Eventually(t, time.Minute, "the deliveries asleep while the receiver is down", func() bool {
		asleep := 0
		for _, e := range webhookDeliveries(t, s) {
			if e.ParkedByWorker() && e.WaitKind == model.JobWaitOutage && e.WaitedFor == sleeping && time.Until(e.NextAttemptAt) > 30*time.Minute {
				asleep++
			}
		}
		return asleep >= n-2 // all but the probe and, perhaps, a failed probe's retry
	})
	// A probe after that finds it still down.
	refused := receiver.State().Refused
	apitest.Eventually(t, time.Minute, "a probe of the receiver while it is down", func() bool {
		return receiver.State().Refused > refused
	})
	require.Empty(t, receiver.State().Received, "nothing delivered while the receiver was down")

	if restart {
		s.Stop()
		again := apitest.Start(t, cfg, db)
		again.Workspace, again.User = s.Workspace, s.User
		again.Token = again.TokenFor(t, s.Workspace, s.User)
		s = again
	}
	receiver.Answer()
	apitest.Eventually(t, 2*time.Minute, "every delivery received", func() bool {
		return len(receiver.State().Received) == n
	})
	apitest.Eventually(t, 30*time.Second, "every delivery done", func() bool {
		for _, e := range webhookDeliveries(t, s) {
			if e.Status != model.OutboxDispatched || e.ParkedByWorker() {
				return false
			}
		}
		return true
	})
	got := receiver.State()
	assert.Zero(t, got.Invalid, "every delivery verifies")
	assert.Zero(t, got.Repeated(), "each webhook-id received once: %v", got.Received)
	events := webhookDeliveries(t, s)
	require.Len(t, events, n)
	for _, e := range events {
		assert.Equal(t, 1, got.Received[e.ID.String()], "delivery %s received once", e.ID)
		assert.Zero(t, e.JobAttempts, "the outage spent no attempt of %s", e.ID)
		assert.NotEqual(t, model.OutboxDeadLetter, e.Status)
	}
	res := s.Do(t, http.MethodGet, "/v1/webhook-endpoints/"+endpoint.String()+"/deliveries", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var failing httpapi.ListOf[httpapi.WebhookDelivery]
	res.JSON(t, &failing)
	assert.Empty(t, failing.Items, "no delivery left failing")
}

// subscribe creates an endpoint of s's workspace for receiver's URL,
// subscribed to operation.succeeded, and makes receiver trust its secret.
func subscribe(t *testing.T, s *apitest.Server, receiver *webhooktest.Counter) uuid.UUID {
	t.Helper()
	res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints",
		map[string]any{"url": receiver.URL, "event_types": []string{model.WebhookOperationSucceeded}},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var created httpapi.WebhookEndpointCreated
	res.JSON(t, &created)
	receiver.Trust(t, created.Secret)
	return created.ID
}

// webhookDeliveries are the webhook deliveries among s's outbox events.
func webhookDeliveries(t *testing.T, s *apitest.Server) []model.OutboxEvent {
	t.Helper()
	var out []model.OutboxEvent
	for _, e := range s.Events(t) {
		if e.Type == model.EventWebhookDeliver {
			out = append(out, e)
		}
	}
	return out
}
