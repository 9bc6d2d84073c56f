package materials_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/objectstore/memstore"
	"github.com/oncehq/once/adapters/simulator/materialsim"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

const signature = "X-Amz-Signature=c0ffee"

type harness struct {
	uow      ports.UnitOfWork
	crash    *testkit.CrashingUoW
	svc      *materials.Service
	source   *materialsim.Sim
	store    *memstore.Store
	handler  *materials.TransferHandler
	logs     *testkit.LogBuffer
	resolver *testkit.Resolver
	ws       uuid.UUID
}

func newHarness(t *testing.T, opts ...materialsim.Option) *harness {
	t.Helper()
	uow := memory.NewUnitOfWork(memory.NewDB())
	resolver := testkit.NewResolver()
	h := &harness{
		uow:      uow,
		resolver: resolver,
		crash:    testkit.NewCrashingUoW(uow),
		svc:      materials.NewService(uow, system.NewClock(), system.NewIDs(), fetchpolicy.Policy{}, resolver),
		source:   materialsim.New(opts...),
		store:    memstore.New(),
		logs:     &testkit.LogBuffer{},
		ws:       uuid.New(),
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.handler = materials.NewTransferHandler(h.crash, h.source, h.store, system.NewClock(), log)
	t.Cleanup(func() {
		assert.NotContains(t, h.logs.String(), signature, "signed URLs must never be logged")
	})
	return h
}

// urls returns n signed source URLs.
func urls(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("https://cdn.example.com/p/%d.jpg?%s&X-Amz-Expires=300&n=%d", i, signature, i)
	}
	return out
}

// start accepts a transfer as the API does and returns it, its operation,
// and the message the Dispatcher would publish.
func (h *harness) start(t *testing.T, ctx context.Context, sources []string) (model.MaterialTransfer, model.Operation, ports.Message) {
	t.Helper()
	p := model.Principal{WorkspaceID: h.ws, UserID: uuid.New(), Role: model.RoleMember}
	var tr model.MaterialTransfer
	var op model.Operation
	var events []model.OutboxEvent
	require.NoError(t, h.uow.Transact(ctx, h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if tr, op, err = h.svc.Start(ctx, tx, p, sources); err != nil {
			return err
		}
		events, err = tx.Outbox().List(ctx, model.OutboxPending, 100)
		return err
	}))
	var ev model.OutboxEvent
	for _, e := range events {
		if e.AggregateID == tr.ID {
			ev = e
		}
	}
	require.Equal(t, model.EventMaterialTransfer, ev.Type)
	return tr, op, ports.MessageOf(ev)
}

func (h *harness) state(t *testing.T, tr model.MaterialTransfer) (model.MaterialTransfer, model.Operation) {
	t.Helper()
	got, err := h.svc.Get(context.Background(), model.Principal{WorkspaceID: h.ws}, tr.ID)
	require.NoError(t, err)
	var op model.Operation
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		op, err = tx.Operations().Get(ctx, tr.OperationID)
		return err
	}))
	return got, op
}

// assertCopied checks every item is done, stored once under its key, with
// the source's bytes.
func (h *harness) assertCopied(t *testing.T, tr model.MaterialTransfer, sources []string) {
	t.Helper()
	got, op := h.state(t, tr)
	assert.Equal(t, model.TaskSucceeded, got.Status)
	assert.Equal(t, model.OperationSucceeded, op.Status)
	assert.Empty(t, op.Error)
	require.Len(t, got.Items, len(sources))
	for i, it := range got.Items {
		key := materials.ObjectKey(h.ws, tr.ID, i)
		assert.True(t, it.Done, "item %d", i)
		assert.Equal(t, key, it.ObjectKey)
		assert.Equal(t, 1, h.store.Writes(key), "one object for item %d", i)
		data, info, err := h.store.Get(context.Background(), key)
		require.NoError(t, err)
		assert.Equal(t, materialsim.Content(sources[i]), data)
		assert.Equal(t, info.Size, it.SizeBytes)
		assert.Equal(t, materialsim.ContentType, info.ContentType)
	}
}

// The same message delivered twice fetches and stores each item once.
func TestDuplicateDeliveryCopiesEachItemOnce(t *testing.T) {
	h := newHarness(t)
	sources := urls(3)
	tr, _, msg := h.start(t, context.Background(), sources)

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	require.NoError(t, h.handler.Handle(context.Background(), msg))

	for _, u := range sources {
		assert.Equal(t, 1, h.source.Fetches(u))
	}
	assert.Equal(t, 3, h.source.FetchCount())
	h.assertCopied(t, tr, sources)
}

// An outage in the middle of five items: the redelivery resumes at the
// failed item and fetches none before it again.
func TestRedeliveryResumesAtTheFirstItemNotDone(t *testing.T) {
	h := newHarness(t)
	sources := urls(5)
	tr, _, msg := h.start(t, context.Background(), sources)
	h.source.FailNext(sources[2], 1, nil)

	err := h.handler.Handle(context.Background(), msg)
	require.True(t, domain.IsCode(err, domain.CodeUnavailable), "redeliver: %v", err)
	got, op := h.state(t, tr)
	assert.Equal(t, model.TaskRunning, got.Status)
	assert.Equal(t, model.OperationRunning, op.Status)
	assert.Equal(t, []bool{true, true, false, false, false}, doneFlags(got))
	assert.Zero(t, h.source.Fetches(sources[3]), "nothing after the failed item")

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.source.Fetches(sources[0]), "not fetched again")
	assert.Equal(t, 1, h.source.Fetches(sources[1]), "not fetched again")
	assert.Equal(t, 2, h.source.Fetches(sources[2]))
	assert.Equal(t, 1, h.source.Fetches(sources[3]))
	assert.Equal(t, 1, h.source.Fetches(sources[4]))
	h.assertCopied(t, tr, sources)
}

// The worker died after storing item 1 and before recording it: the
// redelivery records the object already there and writes no second one.
func TestCrashBetweenStoringAndRecordingMakesNoSecondObject(t *testing.T) {
	h := newHarness(t)
	sources := urls(3)
	tr, _, msg := h.start(t, context.Background(), sources)
	// Transactions: 1 start, 2 item 0 done, 3 item 1 done.
	h.crash.CrashNext(3)

	require.Error(t, h.handler.Handle(context.Background(), msg))
	got, _ := h.state(t, tr)
	assert.Equal(t, []bool{true, false, false}, doneFlags(got))
	assert.Equal(t, 1, h.store.Writes(materials.ObjectKey(h.ws, tr.ID, 1)), "stored but not recorded")

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 1, h.source.Fetches(sources[0]))
	assert.Equal(t, 2, h.source.Fetches(sources[1]), "fetched again, not stored again")
	assert.Equal(t, 1, h.source.Fetches(sources[2]))
	h.assertCopied(t, tr, sources)
}

// The worker died after recording the last item and before the transfer
// succeeded: the redelivery fetches nothing and finishes.
func TestCrashBeforeFinishingFetchesNothingAgain(t *testing.T) {
	h := newHarness(t)
	sources := urls(2)
	tr, _, msg := h.start(t, context.Background(), sources)
	h.crash.CrashNext(4) // 1 start, 2-3 items, 4 finish

	require.Error(t, h.handler.Handle(context.Background(), msg))
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	assert.Equal(t, 2, h.source.FetchCount())
	h.assertCopied(t, tr, sources)
}

// A file that does not exist fails the transfer for good, with a reason
// that names the item, not its signed URL.
func TestPermanentFetchErrorFailsTheTransfer(t *testing.T) {
	h := newHarness(t)
	sources := urls(3)
	sources[1] = "https://cdn.missing/p/gone.jpg?" + signature
	tr, _, msg := h.start(t, context.Background(), sources)

	require.NoError(t, h.handler.Handle(context.Background(), msg))
	got, op := h.state(t, tr)
	assert.Equal(t, model.TaskFailed, got.Status)
	assert.Equal(t, model.OperationFailed, op.Status)
	assert.Equal(t, got.Reason, op.Error)
	assert.Contains(t, op.Error, "item 1")
	assert.NotContains(t, op.Error, signature)
	assert.NotContains(t, op.Error, "c0ffee")
	assert.Equal(t, []bool{true, false, false}, doneFlags(got))
	assert.Zero(t, h.source.Fetches(sources[2]))

	require.NoError(t, h.handler.Handle(context.Background(), msg), "a finished transfer is a no-op")
	assert.Equal(t, 2, h.source.FetchCount())
}

// A source whose permanent error quotes a signed URL gets it redacted.
func TestAReasonThatQuotesASignedURLIsSanitized(t *testing.T) {
	h := newHarness(t)
	sources := urls(1)
	h.source.FailNext(sources[0], 1, domain.Errorf(domain.CodeValidation, "not an image: %s", sources[0]))
	tr, _, msg := h.start(t, context.Background(), sources)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	_, op := h.state(t, tr)
	assert.Equal(t, model.OperationFailed, op.Status)
	assert.NotContains(t, op.Error, "c0ffee")
	assert.Contains(t, op.Error, "[redacted]")
}

// An object store outage is transient: nothing is recorded, the
// redelivery copies the item.
func TestObjectStoreOutageIsRetried(t *testing.T) {
	h := newHarness(t)
	sources := urls(2)
	tr, _, msg := h.start(t, context.Background(), sources)
	h.store.FailWith(func(op memstore.Op, _ string) error {
		return domain.Errorf(domain.CodeUnavailable, "simulated storage outage")
	})
	require.True(t, domain.IsCode(h.handler.Handle(context.Background(), msg), domain.CodeUnavailable))
	got, _ := h.state(t, tr)
	assert.Equal(t, model.TaskRunning, got.Status)
	h.store.FailWith(nil)
	require.NoError(t, h.handler.Handle(context.Background(), msg))
	h.assertCopied(t, tr, sources)
}

// Concurrent duplicates (two workers got the same message) still store
// each item once.
func TestConcurrentDuplicatesStoreEachItemOnce(t *testing.T) {
	h := newHarness(t, materialsim.WithLatency(2*time.Millisecond))
	sources := urls(4)
	tr, _, msg := h.start(t, context.Background(), sources)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { assert.NoError(t, h.handler.Handle(context.Background(), msg)) })
	}
	wg.Wait()
	h.assertCopied(t, tr, sources)
}

func TestMessagesThatCanNeverSucceedArePermanentErrors(t *testing.T) {
	h := newHarness(t)
	_, _, msg := h.start(t, context.Background(), urls(1))

	bad := msg
	bad.Payload = []byte(`{"transfer_id":`)
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Type = model.EventAITask
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation))

	bad = msg
	bad.Payload, _ = json.Marshal(model.MaterialTransferRun{TransferID: uuid.New(), JobOperation: model.JobOperation{OperationID: uuid.New()}})
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	bad = msg
	bad.WorkspaceID = uuid.New() // another workspace's outbox has no such event
	assert.True(t, domain.IsCode(h.handler.Handle(context.Background(), bad), domain.CodeValidation), "no event of the outbox as written (jobs.Stored)")

	assert.Zero(t, h.source.FetchCount())
}

func doneFlags(t model.MaterialTransfer) []bool {
	out := make([]bool, len(t.Items))
	for i, it := range t.Items {
		out[i] = it.Done
	}
	return out
}
