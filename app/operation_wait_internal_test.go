package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx/fxtest"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/ports"
)

// A server that shuts down answers the reads waiting for an operation's
// end at once, with the state they read, instead of holding its drain for
// up to operations.MaxWait.
func TestHTTPShutdownAnswersWaitingReads(t *testing.T) {
	signal := memory.NewSignal()
	uow := operations.AnnounceEnds(memory.NewUnitOfWork(memory.NewDB()), signal)
	waiters := operations.NewWaiters(signal, 0, 0)
	svc := operations.NewService(uow).WithWaiters(waiters)
	log := slog.New(slog.DiscardHandler)
	srv, err := newHTTPServer(fxtest.NewLifecycle(t), DefaultConfig().HTTPConfig, httpapi.Deps{}, waiters, Tracing{},
		prometheus.New(nil, nil, log), &Shutdown{log: log}, log)
	require.NoError(t, err)

	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	op := model.Operation{ID: uuid.New(), WorkspaceID: p.WorkspaceID, Kind: model.OperationStoreVerify,
		Status: model.OperationPending, ResourceType: "store", ResourceID: uuid.New(), CreatedAt: time.Now(), UpdatedAt: time.Now()}
	require.NoError(t, uow.Transact(context.Background(), p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Operations().Create(ctx, op)
	}))
	answer := make(chan model.Operation, 1)
	go func() {
		got, err := svc.Wait(context.Background(), p, op.ID, operations.MaxWait)
		assert.NoError(t, err)
		answer <- got
	}()
	require.Eventually(t, func() bool { return waiters.Waiting() == 1 }, 10*time.Second, time.Millisecond)

	require.NoError(t, srv.Shutdown(context.Background()))
	select {
	case got := <-answer:
		assert.Equal(t, model.OperationPending, got.Status)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting read was not answered on shutdown (it waits 25 s)")
	}
}
