package ai_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/objectstore/memstore"
	"github.com/oncehq/once/adapters/simulator/aisim"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

type harness struct {
	uow      ports.UnitOfWork
	crash    *testkit.CrashingUoW
	svc      *ai.Service
	provider *aisim.Sim
	store    *memstore.Store
	handler  *ai.TaskHandler
	ws       uuid.UUID
	product  model.Product
}

func newHarness(t *testing.T, opts ...aisim.Option) *harness {
	t.Helper()
	uow := memory.NewUnitOfWork(memory.NewDB())
	h := &harness{
		uow:      uow,
		crash:    testkit.NewCrashingUoW(uow),
		svc:      ai.NewService(uow, system.NewClock(), system.NewIDs()),
		provider: aisim.New(opts...),
		store:    memstore.New(),
		ws:       uuid.New(),
	}
	h.handler = ai.NewTaskHandler(h.crash, h.provider, h.store, system.NewClock(), system.NewIDs(), slog.New(slog.DiscardHandler))
	h.product = h.createProduct(t, h.ws, "Cast iron pan")
	return h
}

func (h *harness) createProduct(t *testing.T, ws uuid.UUID, title string) model.Product {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	p := model.Product{
		ID: uuid.New(), WorkspaceID: ws, Title: title, Description: "28 cm, pre-seasoned",
		PriceMinor: 3999, Currency: "EUR", Revision: 1, CreatedAt: now, UpdatedAt: now,
	}
	require.NoError(t, h.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Products().Create(ctx, p)
	}))
	return p
}

// start accepts a task as the API does and returns it, its operation and
// the message the Dispatcher would publish.
func (h *harness) start(t *testing.T, ctx context.Context, kind model.AIKind, instructions string) (model.AITask, model.Operation, ports.Message) {
	t.Helper()
	p := model.Principal{WorkspaceID: h.ws, UserID: uuid.New(), Role: model.RoleMember}
	var task model.AITask
	var op model.Operation
	var events []model.OutboxEvent
	require.NoError(t, h.uow.Transact(ctx, h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		task, op, err = h.svc.Start(ctx, tx, p, ai.StartCommand{ProductID: h.product.ID, Kind: kind, Instructions: instructions})
		if err != nil {
			return err
		}
		events, err = tx.Outbox().List(ctx, model.OutboxPending, 100)
		return err
	}))
	var ev model.OutboxEvent
	for _, e := range events {
		if e.AggregateID == task.ID {
			ev = e
		}
	}
	require.Equal(t, model.EventAITask, ev.Type)
	return task, op, ports.MessageOf(ev)
}

type state struct {
	task    model.AITask
	op      model.Operation
	billing []model.BillingRecord
	media   *model.Media
}

func (h *harness) state(t *testing.T, task model.AITask) state {
	t.Helper()
	var s state
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if s.task, err = ports.Repository[ports.AITaskRepository](tx).Get(ctx, task.ID); err != nil {
			return err
		}
		if s.op, err = tx.Operations().Get(ctx, task.OperationID); err != nil {
			return err
		}
		if s.billing, err = ports.Repository[ports.AITaskRepository](tx).BillingRecords(ctx, task.ID); err != nil {
			return err
		}
		m, err := tx.Media().Get(ctx, ai.ImageMediaID(task.ID))
		if err == nil {
			s.media = &m
		} else if !domain.IsCode(err, domain.CodeNotFound) {
			return err
		}
		return nil
	}))
	return s
}

// assertDoneOnce checks the task succeeded with one charge, one billing
// record and, for an image, one object and one media row.
func (h *harness) assertDoneOnce(t *testing.T, task model.AITask) {
	t.Helper()
	s := h.state(t, task)
	assert.Equal(t, model.TaskSucceeded, s.task.Status)
	assert.Equal(t, model.OperationSucceeded, s.op.Status)
	assert.Empty(t, s.op.Error)
	assert.Equal(t, 1, h.provider.ChargesFor(task.ID.String()), "the task id is the request token")
	assert.Equal(t, 1, h.provider.Charges())
	require.Len(t, s.billing, 1)
	assert.Equal(t, aisim.Units(task.Kind), s.billing[0].Units)
	assert.Equal(t, h.ws, s.billing[0].WorkspaceID)

	want := aisim.Result(ports.AIRequest{Kind: task.Kind, Title: h.product.Title, Description: h.product.Description, Instructions: task.Instructions})
	switch task.Kind {
	case model.AIText:
		assert.Equal(t, want.Text, s.task.Result)
		assert.Nil(t, s.media)
	case model.AICategory:
		assert.Equal(t, want.Category, s.task.Result)
		assert.Nil(t, s.media)
	case model.AIImage:
		key := ai.ImageObjectKey(h.ws, task.ID)
		assert.Equal(t, ai.ImageMediaID(task.ID).String(), s.task.Result)
		assert.Equal(t, 1, h.store.Writes(key))
		assert.Equal(t, []string{key}, h.store.Keys())
		data, info, err := h.store.Get(context.Background(), key)
		require.NoError(t, err)
		assert.Equal(t, want.Image, data)
		require.NotNil(t, s.media)
		assert.Equal(t, model.MediaReady, s.media.Status)
		assert.Empty(t, s.media.Variants)
		assert.Equal(t, "ai-"+task.ID.String()+".png", s.media.Filename)
		assert.Equal(t, key, s.media.ObjectKey)
		assert.Equal(t, info.Size, s.media.SizeBytes)
		assert.Equal(t, aisim.ImageContentType, s.media.ContentType)
		assert.Equal(t, h.ws, s.media.WorkspaceID)
	}
}

var kinds = []model.AIKind{model.AIText, model.AICategory, model.AIImage}

// The same message delivered twice calls and bills once.
func TestDuplicateDeliveryChargesAndBillsOnce(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t)
			task, _, msg := h.start(t, context.Background(), kind, "friendly tone")
			require.NoError(t, h.handler.Handle(context.Background(), msg))
			require.NoError(t, h.handler.Handle(context.Background(), msg))
			assert.Equal(t, 1, h.provider.Calls(), "a finished task is not sent again")
			h.assertDoneOnce(t, task)
		})
	}
}

// The provider charged but the answer was lost: the redelivery gets the
// first result without a second charge and bills once.
func TestAnswerLostAfterTheChargeIsRecoveredWithoutASecondCharge(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t)
			task, _, msg := h.start(t, context.Background(), kind, "")
			h.provider.FailAfterCharge(1)

			err := h.handler.Handle(context.Background(), msg)
			require.True(t, domain.IsCode(err, domain.CodeUnavailable), "redeliver: %v", err)
			s := h.state(t, task)
			assert.Equal(t, model.TaskRunning, s.task.Status)
			assert.Equal(t, model.OperationRunning, s.op.Status)
			assert.Empty(t, s.billing)

			require.NoError(t, h.handler.Handle(context.Background(), msg))
			assert.Equal(t, 2, h.provider.Calls())
			h.assertDoneOnce(t, task)
		})
	}
}

// The worker died after the provider answered and the image was stored,
// before the recording transaction committed: the redelivery is not
// charged again, writes no second object and bills once.
func TestCrashBeforeRecordingIsRecoveredWithoutSecondEffects(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t)
			task, _, msg := h.start(t, context.Background(), kind, "")
			h.crash.CrashNext(2) // 1 start, 2 record

			require.Error(t, h.handler.Handle(context.Background(), msg))
			s := h.state(t, task)
			assert.Equal(t, model.TaskRunning, s.task.Status)
			assert.Empty(t, s.billing, "rolled back")
			assert.Nil(t, s.media, "rolled back")

			require.NoError(t, h.handler.Handle(context.Background(), msg))
			h.assertDoneOnce(t, task)
		})
	}
}

// Concurrent duplicates (two workers got the same message) still charge,
// bill and store once.
func TestConcurrentDuplicatesHaveOneEffect(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t, aisim.WithLatency(2*time.Millisecond))
			task, _, msg := h.start(t, context.Background(), kind, "")
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					// A delivery that loses the race while the winner is
					// still recording asks to be retried; none fails for
					// good.
					if err := h.handler.Handle(context.Background(), msg); err != nil {
						assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
					}
				})
			}
			wg.Wait()
			require.NoError(t, h.handler.Handle(context.Background(), msg), "the retry")
			h.assertDoneOnce(t, task)
		})
	}
}

func TestOutageBeforeTheProviderActedIsRetried(t *testing.T) {
	h := newHarness(t)
	task, _, msg := h.start(t, context.Background(), model.AIText, "")
	h.provider.FailNext(1, nil)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), msg), domain.CodeUnavailable))
	assert.Zero(t, h.provider.Charges())
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	h.assertDoneOnce(t, task)
}

func TestObjectStoreOutageIsRetriedWithoutASecondCharge(t *testing.T) {
	h := newHarness(t)
	task, _, msg := h.start(t, context.Background(), model.AIImage, "")
	h.store.FailWith(func(memstore.Op, string) error {
		return domain.Errorf(domain.CodeUnavailable, "simulated storage outage")
	})
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), msg), domain.CodeUnavailable))
	h.store.FailWith(nil)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	h.assertDoneOnce(t, task)
}

// A content-policy refusal is permanent: the task fails, nothing is billed
// and a redelivery does not call again.
func TestPermanentProviderErrorFailsTheTask(t *testing.T) {
	h := newHarness(t)
	task, _, msg := h.start(t, context.Background(), model.AIText, "something forbidden")
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	s := h.state(t, task)
	assert.Equal(t, model.TaskFailed, s.task.Status)
	assert.Equal(t, model.OperationFailed, s.op.Status)
	assert.Contains(t, s.op.Error, "content policy")
	assert.Equal(t, s.op.Error, s.task.Reason)
	assert.Empty(t, s.task.Result)
	assert.Empty(t, s.billing)

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.provider.Calls())
	assert.Zero(t, h.provider.Charges())
}

// A provider reason that echoes a secret is redacted.
func TestAProviderReasonThatEchoesASecretIsSanitized(t *testing.T) {
	h := newHarness(t)
	task, _, msg := h.start(t, context.Background(), model.AIText, "")
	h.provider.FailNext(1, domain.Errorf(domain.CodeForbidden, "quota exceeded for api_key=sk-live-123456"))
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	s := h.state(t, task)
	assert.Equal(t, model.OperationFailed, s.op.Status)
	assert.Contains(t, s.op.Error, "quota exceeded")
	assert.NotContains(t, s.op.Error, "sk-live-123456")
}

func TestMessagesThatCanNeverSucceedArePermanentErrors(t *testing.T) {
	h := newHarness(t)
	_, _, msg := h.start(t, context.Background(), model.AIText, "")

	bad := msg
	bad.Payload = []byte(`{"task_id":`)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Type = model.EventMaterialTransfer
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Payload, _ = json.Marshal(model.AITaskRun{TaskID: uuid.New(), JobOperation: model.JobOperation{OperationID: uuid.New()}})
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	bad = msg
	bad.WorkspaceID = uuid.New() // another workspace's outbox has no such event
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	assert.Zero(t, h.provider.Calls())
}
