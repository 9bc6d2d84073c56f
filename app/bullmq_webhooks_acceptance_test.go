package app_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/bullmqtest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// With ONCE_QUEUE=bullmq against PostgreSQL and Redis, a store's
// verification job is a BullMQ job waiting for the Node.js workers (none
// runs here), while its operation's end (cancelled through the API) reaches
// a receiver written with the standardwebhooks npm package: once's own
// worker takes the delivery from Redis Streams, never from BullMQ. The
// worker is `once serve`'s in-process one, or `once work` in a process of
// its own; either has the delivery's handler and no other.
func TestPostgresBullMQWebhooksAreDeliveredByOncesOwnWorker(t *testing.T) {
	t.Run("serve", func(t *testing.T) { testBullMQWebhooks(t, true) })
	t.Run("work", func(t *testing.T) { testBullMQWebhooks(t, false) })
}

func testBullMQWebhooks(t *testing.T, inProcess bool) {
	db := pgtest.New(t)
	cfg := bullmqConfig(t, db.AppDSN)
	cfg.Dispatcher, cfg.Worker = true, inProcess
	cfg.DispatchPollInterval = 50 * time.Millisecond
	cfg.FetchAllowCIDRs = "127.0.0.0/8"
	var handlers app.Handlers
	populate := fx.Populate(&handlers)
	var s *apitest.Server
	if inProcess {
		s = apitest.Start(t, cfg, db, populate)
	} else {
		s = apitest.Start(t, cfg, db)
		work := cfg
		work.Dispatcher, work.Worker = false, true
		apitest.Start(t, work, db, populate)
	}
	assert.Equal(t, []string{model.EventWebhookDeliver}, slices.Sorted(func(yield func(string) bool) {
		for eventType := range handlers {
			if !yield(eventType) {
				return
			}
		}
	}), "the worker consumes once's own jobs only")

	endpoint, receiver := subscribedReceiver(t, s, model.WebhookOperationCancelled)

	// The job lands in BullMQ's wait list for the Node.js workers.
	verify := startTask(t, s, "/v1/stores", storeBody("bullmq-hooks-"+uuid.NewString()[:8]))
	job := eventOf(t, s, verify.Operation.ID)
	rc := bullmqtest.Client(t, cfg.RedisURL)
	ctx := context.Background()
	wait := cfg.BullMQPrefix + ":" + model.EventStoreCredentialsVerify + ":wait"
	apitest.Eventually(t, 30*time.Second, "the job waits in BullMQ", func() bool {
		return slices.Contains(rc.LRange(ctx, wait, 0, -1).Val(), job.ID.String())
	})

	res := s.Do(t, http.MethodPost, "/v1/operations/"+verify.Operation.ID.String()+"/cancel", nil,
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

	delivery := nextDelivery(t, s, receiver)
	assert.Equal(t, model.WebhookDestination(endpoint.ID), delivery.Destination)

	// It went through the stream of once's own jobs, and BullMQ never saw it.
	stream := queue.Topic(cfg.QueuePrefix, model.EventWebhookDeliver)
	assert.Positive(t, rc.XLen(ctx, stream).Val(), "the delivery was published to %s", stream)
	bullKeys := rc.Keys(ctx, cfg.BullMQPrefix+":"+model.EventWebhookDeliver+":*").Val()
	assert.Empty(t, bullKeys, "no BullMQ queue of webhook.deliver")
	assert.True(t, slices.Contains(rc.LRange(ctx, wait, 0, -1).Val(), job.ID.String()), "the task's job still waits for Node.js")
}
