package app_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// handledMessages records the messages a worker's handlers have finished
// with (returned from), by event id, so a test can wait for a delivery to
// be over without timing it.
type handledMessages struct{ ids sync.Map }

func (h *handledMessages) has(id uuid.UUID) bool { _, ok := h.ids.Load(id); return ok }

func (h *handledMessages) inject() fx.Option {
	return fx.Decorate(func(hs app.Handlers) app.Handlers {
		out := app.Handlers{}
		for eventType, handler := range hs {
			out[eventType] = ports.MessageHandlerFunc(func(ctx context.Context, msg ports.Message) error {
				err := handler.Handle(ctx, msg)
				h.ids.Store(msg.ID, err)
				return err
			})
		}
		return out
	})
}

// cancelView is an operation as POST /v1/operations/{id}/cancel answers.
type cancelView struct {
	ID                uuid.UUID  `json:"id"`
	Status            string     `json:"status"`
	CancelRequestedAt *time.Time `json:"cancel_requested_at"`
}

// eventOf is the outbox event that carries operation's job.
func eventOf(t *testing.T, s *apitest.Server, operation uuid.UUID) model.OutboxEvent {
	t.Helper()
	for _, e := range s.Events(t) {
		if id, ok := model.JobOperationID(e.Payload); ok && id == operation {
			return e
		}
	}
	t.Fatalf("no event for operation %s", operation)
	return model.OutboxEvent{}
}

// Cancel, against PostgreSQL, Redis and the simulators served over HTTP:
// jobs queued while no worker runs (their messages already in the broker)
// are cancelled; once a worker runs and has taken their messages, the
// simulator's ledger has no effect for them (no verification, no AI
// generation charged), their operations stay cancelled, and their tasks
// say why. A second cancel answers the same, with the key (a replay) or
// without it; a finished operation's cancel is 409 OPERATION_FINISHED.
func TestPostgresCancelledQueuedJobsNeverReachTheSimulator(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, false
	simURL, ledgerPath := simServer(t)
	cfg.SimURL, cfg.SimTimeout = simURL, 5*time.Second
	api := apitest.Start(t, cfg, db)

	shop := "cancel-" + uuid.NewString()[:8]
	verify := startTask(t, api, "/v1/stores", storeBody(shop))
	ai := startTask(t, api, "/v1/ai-tasks", map[string]any{"product_id": createProduct(t, api), "kind": "text"})
	queued := []started{verify, ai}
	// The Dispatcher hands both to the broker, where no worker takes them
	// yet: the cancel meets messages in flight, not only rows.
	apitest.Eventually(t, 30*time.Second, "both jobs handed to the broker", func() bool {
		for _, op := range queued {
			if eventOf(t, api, op.Operation.ID).Status != model.OutboxDispatched {
				return false
			}
		}
		return true
	})

	cancel := func(op uuid.UUID, key string) apitest.Response {
		return api.Do(t, "POST", "/v1/operations/"+op.String()+"/cancel", nil, map[string]string{"Idempotency-Key": key})
	}
	for _, op := range queued {
		k := key()
		first := cancel(op.Operation.ID, k)
		require.Equal(t, http.StatusOK, first.Status, string(first.Body))
		var got cancelView
		first.JSON(t, &got)
		assert.Equal(t, op.Operation.ID, got.ID)
		assert.Equal(t, "cancelled", got.Status)
		assert.Nil(t, got.CancelRequestedAt, "its job had not started")

		replay := cancel(op.Operation.ID, k)
		require.Equal(t, http.StatusOK, replay.Status, string(replay.Body))
		assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
		assert.JSONEq(t, string(first.Body), string(replay.Body))
		again := cancel(op.Operation.ID, key())
		require.Equal(t, http.StatusOK, again.Status, string(again.Body))
		assert.JSONEq(t, string(first.Body), string(again.Body), "a second cancel answers the same")
	}

	// Concurrent cancels of one queued job, each with a key of its own
	// (several clients): one ends it, all answer the same.
	racing := startTask(t, api, "/v1/stores", storeBody(shop+"-2"))
	queued = append(queued, racing)
	const n = 8
	answers := make([]apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i] = cancel(racing.Operation.ID, key()) })
	}
	wg.Wait()
	for _, r := range answers {
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.JSONEq(t, string(answers[0].Body), string(r.Body))
	}

	// A worker starts (in a process of its own, as `once work`) and takes
	// the cancelled jobs' messages.
	workerCfg := cfg
	workerCfg.Dispatcher, workerCfg.Worker = false, true
	var handled handledMessages
	apitest.Start(t, workerCfg, db, handled.inject())
	apitest.Eventually(t, 30*time.Second, "the worker took the cancelled jobs' messages", func() bool {
		return handled.has(eventOf(t, api, verify.Operation.ID).ID) && handled.has(eventOf(t, api, ai.Operation.ID).ID)
	})

	ledger, err := simhttp.ReadLedger(ledgerPath)
	require.NoError(t, err)
	for _, op := range []started{verify, racing} {
		assert.Empty(t, simhttp.Select(ledger, simhttp.Filter{Kind: simhttp.KindVerify, Token: op.token}), "no verification reached the platform")
	}
	assert.Empty(t, simhttp.Select(ledger, simhttp.Filter{Kind: simhttp.KindGenerate, Token: ai.token}), "no AI call, so nothing charged")
	assert.Zero(t, api.CountRows(t, "ai_billing_records"), "nothing billed")
	for _, op := range queued {
		assert.Equal(t, "cancelled", operationDelivery(t, api, op.Operation.ID).OperationStatus, "stays cancelled")
	}
	r := api.Do(t, "GET", "/v1/ai-tasks/"+ai.Operation.ResourceID.String(), nil, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var task struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	r.JSON(t, &task)
	assert.Equal(t, "failed", task.Status)
	assert.Equal(t, jobs.ReasonCancelled, task.Reason)

	// A job that ran to its end cannot be cancelled any more.
	done := startTask(t, api, "/v1/ai-tasks", map[string]any{"product_id": createProduct(t, api), "kind": "text"})
	require.Equal(t, "succeeded", api.WaitOperation(t, done.Operation.ID, 30*time.Second).Status)
	r = cancel(done.Operation.ID, key())
	require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
	assert.Equal(t, "OPERATION_FINISHED", r.Problem(t).Code)
	assert.Equal(t, "succeeded", operationDelivery(t, api, done.Operation.ID).OperationStatus)

	// Another workspace's operation is not found.
	other := apitest.Start(t, cfg, db)
	r = other.Do(t, "POST", "/v1/operations/"+done.Operation.ID.String()+"/cancel", nil, map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
}
