package app_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/aisim"
	"github.com/oncehq/once/adapters/materialsim"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/internal/apitest"
	"github.com/oncehq/once/internal/pgtest"
	"github.com/oncehq/once/ports"
)

// faults makes the worker's handlers of some event types fail with a code
// before they do anything, until cleared, and counts deliveries per event.
type faults struct {
	codes  sync.Map // event type -> domain.Code
	counts sync.Map // event id -> *atomic.Int32
}

func (f *faults) set(eventType string, code domain.Code) { f.codes.Store(eventType, code) }
func (f *faults) clear(eventType string)                 { f.codes.Delete(eventType) }

func (f *faults) inject() fx.Option {
	return fx.Decorate(func(h app.Handlers) app.Handlers {
		out := app.Handlers{}
		for eventType, handler := range h {
			out[eventType] = ports.MessageHandlerFunc(func(ctx context.Context, msg ports.Message) error {
				n, _ := f.counts.LoadOrStore(msg.ID, new(atomic.Int32))
				n.(*atomic.Int32).Add(1)
				if code, ok := f.codes.Load(eventType); ok {
					return domain.Errorf(code.(domain.Code), "injected %s fault", eventType)
				}
				return handler.Handle(ctx, msg)
			})
		}
		return out
	})
}

// started is the part of every "start a task" answer the test follows.
type started struct {
	Operation struct {
		ID         uuid.UUID `json:"id"`
		ResourceID uuid.UUID `json:"resource_id"`
	} `json:"operation"`
}

// jobCase is one task type as a user starts it and an operator sees it.
type jobCase struct {
	name      string
	eventType string
	// start starts one task (with the faults set) after prepare made what
	// it needs (with the faults cleared).
	prepare func(t *testing.T, s *apitest.Server) (path string, body any)
	// taskPath reads the task; failed and done are its status after a
	// give-up and after success.
	taskPath     string
	failed, done string
	// effects counts the external side effects of the task, nil where the
	// task has none an external system records (media is processed in our
	// own object store; a catalog sync only reads).
	effects func(op started) int
}

func jobCases(sims *sims, s *apitest.Server) []jobCase {
	return []jobCase{
		{"verification", domain.EventStoreCredentialsVerify, func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/stores", storeBody("gives-up-" + uuid.NewString()[:8])
		}, "/v1/stores/", "verification_failed", "verified", func(op started) int { return s.Sim.Effects(op.Operation.ID.String()) }},
		{"media", domain.EventMediaProcess, func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/media/" + uploadedMedia(t, s).String() + "/complete", nil
		}, "/v1/media/", "rejected", "ready", nil},
		{"material transfer", domain.EventMaterialTransfer, func(t *testing.T, s *apitest.Server) (string, any) {
			url := "https://supplier.example/" + uuid.NewString() + ".png"
			sims.urls.Store(url, true)
			return "/v1/material-transfers", map[string]any{"source_urls": []string{url}}
		}, "/v1/material-transfers/", "failed", "succeeded", func(started) int {
			n := 0
			sims.urls.Range(func(url, _ any) bool { n += sims.material.Fetches(url.(string)); return true })
			sims.urls.Clear()
			return n
		}},
		{"publication", domain.EventListingPublish, func(t *testing.T, s *apitest.Server) (string, any) {
			store, product := verifiedStore(t, s), createProduct(t, s)
			return "/v1/products/" + product.String() + "/publications", map[string]any{"store_id": store}
		}, "/v1/publications/", "failed", "succeeded", func(op started) int { return s.Sim.Effects(op.Operation.ResourceID.String()) }},
		{"catalog sync", domain.EventCatalogSync, func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/stores/" + verifiedStore(t, s).String() + "/syncs", nil
		}, "/v1/syncs/", "failed", "succeeded", nil},
		{"AI task", domain.EventAITask, func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/ai-tasks", map[string]any{"product_id": createProduct(t, s), "kind": "text"}
		}, "/v1/ai-tasks/", "failed", "succeeded", func(op started) int { return sims.ai.ChargesFor(op.Operation.ResourceID.String()) }},
	}
}

type sims struct {
	ai       *aisim.Sim
	material *materialsim.Sim
	urls     sync.Map // the source URLs of the transfer under test
}

func startTask(t *testing.T, s *apitest.Server, path string, body any) started {
	t.Helper()
	r := s.Do(t, "POST", path, body, map[string]string{"Idempotency-Key": key()})
	require.Contains(t, []int{http.StatusCreated, http.StatusAccepted}, r.Status, string(r.Body))
	var st started
	r.JSON(t, &st)
	require.NotEqual(t, uuid.Nil, st.Operation.ID, string(r.Body))
	return st
}

func taskStatus(t *testing.T, s *apitest.Server, c jobCase, op started) string {
	t.Helper()
	r := s.Do(t, "GET", c.taskPath+op.Operation.ResourceID.String(), nil, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var task struct {
		Status string `json:"status"`
	}
	r.JSON(t, &task)
	return task.Status
}

// deadLetterOf finds, in the operators' list, the dead letter of op's job.
func deadLetterOf(t *testing.T, s *apitest.Server, op started) (id uuid.UUID, lastError string, found bool) {
	t.Helper()
	r := s.Do(t, "GET", "/v1/outbox/dead-letters", nil, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var list struct {
		Items []struct {
			ID          uuid.UUID `json:"id"`
			AggregateID uuid.UUID `json:"aggregate_id"`
			LastError   string    `json:"last_error"`
		} `json:"items"`
	}
	r.JSON(t, &list)
	for _, item := range list.Items {
		if item.AggregateID == op.Operation.ResourceID {
			return item.ID, item.LastError, true
		}
	}
	return uuid.Nil, "", false
}

// For each of the six task types, against PostgreSQL and Redis: a job
// that fails permanently ends its task and operation failed at its first
// delivery; one that keeps failing transiently ends failed after the
// configured retries and is in the operators' dead letters; re-driven
// once the fault is gone, its operation succeeds with one side effect.
func TestPostgresEveryJobThatGivesUpEndsFailedAndIsRedriven(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, true
	cfg.WorkerMaxRetries = 1
	var f faults
	var sm sims
	s := apitest.Start(t, cfg, db, f.inject(), fx.Populate(&sm.ai, &sm.material))

	for _, c := range jobCases(&sm, s) {
		t.Run(c.name, func(t *testing.T) {
			// A permanent failure: no retry, task and operation failed.
			path, body := c.prepare(t, s)
			f.set(c.eventType, domain.CodeValidation)
			permanent := startTask(t, s, path, body)
			op := s.WaitOperation(t, permanent.Operation.ID, 30*time.Second)
			f.clear(c.eventType)
			require.Equal(t, "failed", op.Status)
			assert.Equal(t, "injected "+c.eventType+" fault", op.Error, "the reason the user reads")
			assert.Equal(t, c.failed, taskStatus(t, s, c, permanent))
			event, _, found := deadLetterOf(t, s, permanent)
			require.True(t, found, "the job is in the operators' dead letters")
			assert.Equal(t, 1, deliveries(&f.counts, event), "one delivery, no retry")

			// A transient failure, every time: failed after the retries.
			path, body = c.prepare(t, s)
			f.set(c.eventType, domain.CodeUnavailable)
			transient := startTask(t, s, path, body)
			op = s.WaitOperation(t, transient.Operation.ID, 60*time.Second)
			require.Equal(t, "failed", op.Status)
			assert.NotEmpty(t, op.Error)
			assert.Equal(t, c.failed, taskStatus(t, s, c, transient))
			event, lastError, found := deadLetterOf(t, s, transient)
			require.True(t, found, "the job is in the operators' dead letters")
			assert.Contains(t, lastError, "injected")
			assert.Equal(t, cfg.WorkerMaxRetries+1, deliveries(&f.counts, event), "the first attempt and the retries")

			// The fault is fixed; the operator re-drives the job.
			f.clear(c.eventType)
			r := s.Do(t, "POST", "/v1/outbox/dead-letters/"+event.String()+"/redrive", nil, nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			require.JSONEq(t, `{"redriven":1}`, string(r.Body))
			op = s.WaitOperation(t, transient.Operation.ID, 30*time.Second)
			require.Equal(t, "succeeded", op.Status, op.Error)
			assert.Equal(t, c.done, taskStatus(t, s, c, transient))
			if c.effects != nil {
				assert.Equal(t, 1, c.effects(transient), "one side effect in the simulator's record")
			}
			_, _, found = deadLetterOf(t, s, transient)
			assert.False(t, found, "no longer a dead letter")
		})
	}
}
