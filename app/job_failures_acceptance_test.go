package app_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
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
	// token is the request token the job carries to the external system.
	token string
}

// jobCase is one task type as a user starts it and an operator sees it.
type jobCase struct {
	name string
	// start starts one task (with the faults set) after prepare made what
	// it needs (with the faults cleared).
	prepare func(t *testing.T, s *apitest.Server) (path string, body any)
	// taskPath reads the task; failed and done are its status after a
	// give-up and after success.
	taskPath     string
	failed, done string
	// effects counts the external calls of the task in the HTTP
	// simulator's ledger (the side effect under its request token, or the
	// file a transfer copies), nil where the task has none (media is
	// processed in our own object store; a catalog sync only reads).
	effects func(op started) int
}

// ledgerEffects counts the entries of the simulator's ledger at
// ledgerPath that f selects, for a token or a subject of the task under
// test (-1 if the ledger cannot be read).
func ledgerEffects(ledgerPath string, f func(op started) simhttp.Filter) func(op started) int {
	return func(op started) int {
		ledger, err := simhttp.ReadLedger(ledgerPath)
		if err != nil {
			return -1
		}
		return len(simhttp.Select(ledger, f(op)))
	}
}

func startTask(t *testing.T, s *apitest.Server, path string, body any) started {
	t.Helper()
	r := s.Do(t, "POST", path, body, map[string]string{"Idempotency-Key": key()})
	require.Contains(t, []int{http.StatusCreated, http.StatusAccepted}, r.Status, string(r.Body))
	var st started
	r.JSON(t, &st)
	require.NotEqual(t, uuid.Nil, st.Operation.ID, string(r.Body))
	st.token = s.RequestToken(t, st.Operation.ID)
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
			OperationID uuid.UUID `json:"operation_id"`
			Stage       string    `json:"stage"`
			LastError   string    `json:"last_error"`
		} `json:"items"`
		Groups []struct {
			LastError string      `json:"last_error"`
			Count     int         `json:"count"`
			EventIDs  []uuid.UUID `json:"event_ids"`
		} `json:"groups"`
	}
	r.JSON(t, &list)
	for _, item := range list.Items {
		if item.AggregateID != op.Operation.ResourceID {
			continue
		}
		assert.Equal(t, op.Operation.ID, item.OperationID)
		assert.Equal(t, "job", item.Stage, "delivered, then given up on by the worker")
		grouped := false
		for _, g := range list.Groups {
			grouped = grouped || (g.LastError == item.LastError && g.Count == len(g.EventIDs) && slices.Contains(g.EventIDs, item.ID))
		}
		assert.True(t, grouped, "the dead letter is in the group of its error")
		return item.ID, item.LastError, true
	}
	return uuid.Nil, "", false
}

// For each of the six task types, against PostgreSQL and Redis: a job
// that fails permanently ends its task and operation failed at its first
// delivery; one that keeps failing by its own fault (an unclassified
// error, not an outage, which spends no attempt) ends failed after the
// configured retries and is in the operators' dead letters; re-driven
// once the fault is gone, its operation succeeds with exactly one side
// effect in the ledger of the simulator served over HTTP.
func TestPostgresEveryJobThatGivesUpEndsFailedAndIsRedriven(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, true
	cfg.WorkerMaxRetries = 1
	simURL, ledgerPath := simServer(t)
	cfg.SimURL, cfg.SimTimeout = simURL, 5*time.Second
	var f faults
	s := apitest.Start(t, cfg, db, f.inject())

	for _, k := range kinds.All {
		job := kindCases[k.EventType].job
		require.NotNil(t, job, "task kind %s has no job case in its test file (kindCases)", k.EventType)
		c := job(ledgerPath)
		kind := k.EventType
		t.Run(c.name, func(t *testing.T) {
			// A permanent failure: no retry, task and operation failed.
			path, body := c.prepare(t, s)
			f.set(kind, domain.CodeValidation)
			permanent := startTask(t, s, path, body)
			op := s.WaitOperation(t, permanent.Operation.ID, 30*time.Second)
			f.clear(kind)
			require.Equal(t, "failed", op.Status)
			assert.Equal(t, "injected "+kind+" fault", op.Error, "the reason the user reads")
			assert.Equal(t, c.failed, taskStatus(t, s, c, permanent))
			event, _, found := deadLetterOf(t, s, permanent)
			require.True(t, found, "the job is in the operators' dead letters")
			assert.Equal(t, 1, deliveries(&f.counts, event), "one delivery, no retry")

			// A failure of its own, every time: failed after the retries.
			path, body = c.prepare(t, s)
			f.set(kind, domain.CodeInternal)
			transient := startTask(t, s, path, body)
			op = s.WaitOperation(t, transient.Operation.ID, 60*time.Second)
			require.Equal(t, "failed", op.Status)
			assert.NotEmpty(t, op.Error)
			assert.Equal(t, c.failed, taskStatus(t, s, c, transient))
			event, lastError, found := deadLetterOf(t, s, transient)
			require.True(t, found, "the job is in the operators' dead letters")
			assert.Contains(t, lastError, "injected")
			assert.Equal(t, cfg.WorkerMaxRetries+1, deliveries(&f.counts, event), "the first attempt and the retries")
			if c.effects != nil {
				assert.Zero(t, c.effects(transient), "the failing handler reached no external system")
			}
			v := operationDelivery(t, s, transient.Operation.ID)
			require.NotNil(t, v.Delivery)
			assert.Equal(t, "dead_letter", v.Delivery.Status, "the user sees the job waits for an operator")
			assert.Equal(t, lastError, v.Delivery.LastError)

			// The fault is fixed; the operator re-drives the job.
			f.clear(kind)
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

// deliveryView is an operation as GET /v1/operations/{id} shows its
// delivery.
type deliveryView struct {
	OperationStatus string `json:"status"`
	Delivery        *struct {
		Status        string     `json:"status"`
		Attempts      int        `json:"attempts"`
		NextAttemptAt *time.Time `json:"next_attempt_at"`
		LastError     string     `json:"last_error"`
	} `json:"delivery"`
}

func operationDelivery(t *testing.T, s *apitest.Server, id uuid.UUID) deliveryView {
	t.Helper()
	r := s.Do(t, "GET", "/v1/operations/"+id.String(), nil, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var v deliveryView
	r.JSON(t, &v)
	return v
}

// While the broker refuses an event, its operation says so: pending, with
// the failed attempts, when the next one is due and the sanitized reason,
// in the operation and in the list.
func TestPostgresDeliveryBackingOffShowsOnTheOperation(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Dispatcher = true
	// One failure, then a wait long enough to look at.
	cfg.DispatchMaxAttempts, cfg.DispatchBackoffBase, cfg.DispatchBackoffMax = 5, time.Hour, time.Hour
	cfg.DispatchPollInterval = 50 * time.Millisecond
	s := apitest.Start(t, cfg, db, fx.Decorate(func(p ports.Publisher) ports.Publisher {
		return publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
			return errors.New("broker refused the event: password=hunter2")
		})
	}))
	created := createStore(t, s, "backing-off")
	failedAt := time.Now()

	var v deliveryView
	apitest.Eventually(t, 20*time.Second, "a failed attempt on the operation", func() bool {
		v = operationDelivery(t, s, created.Operation.ID)
		return v.Delivery != nil && v.Delivery.Attempts >= 1
	})
	assert.Equal(t, "pending", v.OperationStatus)
	assert.Equal(t, "pending", v.Delivery.Status)
	assert.Contains(t, v.Delivery.LastError, "broker refused the event")
	assert.NotContains(t, v.Delivery.LastError, "hunter2")
	require.NotNil(t, v.Delivery.NextAttemptAt, "when the next attempt is due")
	assert.True(t, v.Delivery.NextAttemptAt.After(failedAt.Add(-time.Second)), "the next attempt is after the failure")

	r := s.Do(t, "GET", "/v1/operations", nil, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var list struct {
		Items []struct {
			ID       uuid.UUID `json:"id"`
			Delivery *struct {
				Status   string `json:"status"`
				Attempts int    `json:"attempts"`
			} `json:"delivery"`
		} `json:"items"`
	}
	r.JSON(t, &list)
	require.Len(t, list.Items, 1)
	require.NotNil(t, list.Items[0].Delivery)
	assert.Equal(t, "pending", list.Items[0].Delivery.Status)
	assert.GreaterOrEqual(t, list.Items[0].Delivery.Attempts, 1)
}
