package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/webhooktest"
)

// Webhook deliveries while processes die: `once work` is killed -9 with
// deliveries in flight (the receiver got them and had not answered), then
// `once dispatch` and `once work` together while the next operations'
// deliveries flow. The receiver, verifying with the standardwebhooks Go
// library, gets every delivery: each expected webhook-id at least once,
// repeated only where a delivery was in flight when its worker died, and
// none other. PostgreSQL and Redis Streams (whose pending entries a new
// worker claims after ONCE_REDIS_CLAIM_IDLE).
func TestWebhookDeliveriesSurviveKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	db := pgtest.New(t)
	w := newOpsWorldOn(t, db, app.QueueRedis, "127.0.0.1:6379",
		"ONCE_FETCH_ALLOW_CIDRS=127.0.0.0/8",
		"ONCE_REDIS_CLAIM_IDLE=1s",
		// What the killed Dispatcher held is taken over soon.
		"ONCE_DISPATCH_LEASE=2s",
		"ONCE_LOG_LEVEL=warn",
	)
	receiver := webhooktest.NewCounter(t)
	w.subscribe(receiver)

	// The receiver takes the first deliveries and answers none: they are
	// in flight, in the worker's slots, when it dies.
	receiver.Hang()
	const wave = 30
	ops := w.connectStores("before", wave)
	apitest.Eventually(t, time.Minute, "deliveries in flight", func() bool { return receiver.State().Open >= 4 })
	w.procs["work"].kill()
	inFlight := receiver.State().Received
	t.Logf("killed the worker with %d deliveries in flight", len(inFlight))
	receiver.Answer()
	w.procs["work"] = startOnce(t, w.env["work"], "work")
	w.waitSucceeded(ops, 2*time.Minute)

	// The next wave's deliveries flow when both die.
	more := w.connectStores("after", wave)
	before := len(receiver.State().Received)
	apitest.Eventually(t, time.Minute, "the next deliveries flowing", func() bool {
		return len(receiver.State().Received) > before
	})
	w.procs["dispatch"].kill()
	w.procs["work"].kill()
	t.Logf("killed the Dispatcher and the worker after %d of the next deliveries", len(receiver.State().Received)-before)
	w.procs["dispatch"] = startOnce(t, w.env["dispatch"], "dispatch")
	w.procs["work"] = startOnce(t, w.env["work"], "work")
	ops = append(ops, more...)
	w.waitSucceeded(ops, 2*time.Minute)

	var expected []webhookEvent
	apitest.Eventually(t, 2*time.Minute, "every delivery received", func() bool {
		expected = webhookEvents(t, db, w.workspace)
		got := receiver.State().Received
		for _, e := range expected {
			if got[e.ID] == 0 {
				return false
			}
		}
		return len(expected) == len(ops)
	})
	got := receiver.State()
	assert.Zero(t, got.Invalid, "every delivery verifies")
	assert.Len(t, got.Received, len(ops), "no delivery but the expected ones")
	for _, e := range expected {
		assert.NotEqual(t, string(model.OutboxDeadLetter), e.Status, "delivery %s: %s", e.ID, e.LastError)
	}
	// The receiver had answered none of those in flight: each came again.
	for id := range inFlight {
		assert.GreaterOrEqual(t, got.Received[id], 2, "delivery %s, in flight when its worker died, came again", id)
	}
	t.Logf("%d deliveries, %d repeated", len(got.Received), got.Repeated())
}

// subscribe creates an endpoint for receiver's URL, subscribed to
// operation.succeeded, and makes receiver trust its secret.
func (w *opsWorld) subscribe(receiver *webhooktest.Counter) {
	w.t.Helper()
	status, body := w.call(http.MethodPost, "/v1/webhook-endpoints",
		map[string]any{"url": receiver.URL, "event_types": []string{model.WebhookOperationSucceeded}})
	require.Equal(w.t, http.StatusCreated, status, string(body))
	var created struct {
		Secret string `json:"secret"`
	}
	require.NoError(w.t, json.Unmarshal(body, &created))
	receiver.Trust(w.t, created.Secret)
}

// connectStores starts n credentials checks and returns their operations.
func (w *opsWorld) connectStores(prefix string, n int) []string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = w.connectStore(fmt.Sprintf("%s-%d-%s", prefix, i, uuid.NewString()[:8]))
	}
	return ops
}

// webhookEvent is a webhook delivery's outbox event as the crash test
// reads it.
type webhookEvent struct {
	ID        string `bun:"id"`
	Status    string `bun:"status"`
	LastError string `bun:"last_error"`
}

// webhookEvents are the workspace's webhook deliveries, read from the
// outbox as the application role.
func webhookEvents(t *testing.T, db *pgtest.DB, ws uuid.UUID) []webhookEvent {
	t.Helper()
	var out []webhookEvent
	err := db.App.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.workspace_id', ?, true)", ws.String()); err != nil {
			return err
		}
		return tx.NewSelect().Table("outbox_events").ColumnExpr("id::text AS id, status, coalesce(last_error, '') AS last_error").
			Where("event_type = ?", model.EventWebhookDeliver).Scan(ctx, &out)
	})
	require.NoError(t, err)
	return out
}
