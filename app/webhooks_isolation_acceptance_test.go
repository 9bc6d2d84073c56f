package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/webhooktest"
)

// isolationSlots is the worker's concurrency in the isolation tests:
// fewer than a webhook endpoint may hold by its own quota, so an endpoint
// that could hold every slot would.
const isolationSlots = 4

// Endpoint A's receiver fails for good (it hangs past the delivery's
// timeout, or answers 500) while endpoint B's is healthy, on a worker of
// few slots: B gets every delivery and every job ends while A is still
// failing, and A never holds all the worker's slots.
func TestAFailingWebhookReceiverDelaysNoOtherEndpointNorJob(t *testing.T) {
	t.Run("hangs", func(t *testing.T) {
		failingReceiver(t, func(c *webhooktest.Counter) { c.Hang() })
	})
	t.Run("answers 500", func(t *testing.T) {
		failingReceiver(t, func(c *webhooktest.Counter) { c.Fail(http.StatusInternalServerError) })
	})
}

func failingReceiver(t *testing.T, fail func(*webhooktest.Counter)) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, true
	cfg.FetchAllowCIDRs = "127.0.0.0/8"
	cfg.WorkConcurrency = isolationSlots
	s := apitest.Start(t, cfg, db)

	a, b := webhooktest.NewCounter(t), webhooktest.NewCounter(t)
	fail(a) // until the test ends
	subscribe(t, s, a)
	subscribe(t, s, b)

	// A's first deliveries fail (or hang) before the others start.
	const n = 24
	ops := make([]uuid.UUID, 0, n)
	start := func() { ops = append(ops, createStore(t, s, "iso-"+uuid.NewString()[:8]).Operation.ID) }
	for range n / 4 {
		start()
	}
	apitest.Eventually(t, time.Minute, "A's receiver failing", func() bool {
		st := a.State()
		return st.Open > 0 || st.Refused > 0
	})
	for len(ops) < n {
		start()
	}
	for _, op := range ops {
		got := s.WaitOperation(t, op, time.Minute)
		require.Equal(t, "succeeded", got.Status, got.Error)
	}
	apitest.Eventually(t, time.Minute, "B receives every delivery", func() bool {
		return len(b.State().Received) == n
	})

	st := a.State()
	assert.Zero(t, st.Answered, "A is still failing")
	assert.Less(t, st.MaxOpen, isolationSlots, "A never held every slot")
	got := b.State()
	assert.Zero(t, got.Invalid)
	assert.Zero(t, got.Repeated(), "each of B's webhook-ids received once")
	for _, e := range webhookDeliveries(t, s) {
		assert.NotEqual(t, model.OutboxDeadLetter, e.Status, "a failing receiver's delivery waits, it is not given up on")
		assert.Zero(t, e.JobAttempts)
	}
}
