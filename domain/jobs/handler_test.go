package jobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

type testPayload struct {
	OperationID uuid.UUID `json:"operation_id"`
	TaskID      uuid.UUID `json:"task_id"`
}

func (p testPayload) Operation() uuid.UUID { return p.OperationID }
func (p testPayload) Task() uuid.UUID      { return p.TaskID }

// outcome is what the lifecycle did with one delivery: whether it called
// out, what End recorded, and whether it told the worker it made no call
// (domain.ReportNoCall).
type outcome struct {
	called bool
	ended  bool
	reason string
	noCall bool
}

// runJob delivers one message to a handler whose Call fails with callErr
// (nil: succeeds) and reports what Handle returned and what End saw.
func runJob(t *testing.T, proceed bool, callErr error) (outcome, error) {
	t.Helper()
	var got outcome
	uow := memory.NewUnitOfWork(memory.NewDB())
	h := jobs.NewHandler(jobs.Job[testPayload, string, string]{
		Event: "test.job", Noun: "test", External: "system", Refused: "the system refused",
		Begin: func(context.Context, ports.Tx, *slog.Logger, jobs.Run[testPayload], time.Time) (string, bool, error) {
			return "work", proceed, nil
		},
		Call: func(_ context.Context, _ *slog.Logger, _ jobs.Run[testPayload], w string) (string, error) {
			got.called = true
			return w + " done", callErr
		},
		End: func(_ context.Context, _ ports.Tx, _ *slog.Logger, _ jobs.Run[testPayload], out, reason string, _ time.Time) error {
			got.ended, got.reason = true, reason
			if reason == "" {
				assert.Equal(t, "work done", out)
			}
			return nil
		},
	}, uow, system.NewClock(), nil)
	event, err := model.NewOutboxEvent(uuid.New(), uuid.New(), "test.job", "test", uuid.New(),
		testPayload{OperationID: uuid.New(), TaskID: uuid.New()}, time.Now())
	require.NoError(t, err)
	require.NoError(t, uow.Transact(context.Background(), event.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, event)
	}))
	ctx, _ := domain.WithJobReport(context.Background())
	err = h.Handle(ctx, ports.MessageOf(event))
	got.noCall = domain.NoCallReported(ctx)
	return got, err
}

// The lifecycle sorts what the external call answered: success and
// permanent failures are recorded (the latter with a reason users may
// read), transient failures and Retry are returned for redelivery, and a
// duplicate never calls out.
func TestJobSortsTheCallsOutcome(t *testing.T) {
	got, err := runJob(t, true, nil)
	require.NoError(t, err)
	assert.Equal(t, outcome{called: true, ended: true}, got)

	got, err = runJob(t, false, nil)
	require.NoError(t, err)
	assert.Equal(t, outcome{noCall: true}, got, "a finished task is a duplicate: no call, nothing recorded, nothing for its destination's gate to learn")

	got, err = runJob(t, true, domain.Errorf(domain.CodeValidation, "listing title too long"))
	require.NoError(t, err)
	assert.Equal(t, outcome{called: true, ended: true, reason: "the system refused: listing title too long"}, got)

	got, err = runJob(t, true, jobs.Fail("no image"))
	require.NoError(t, err)
	assert.Equal(t, outcome{called: true, ended: true, reason: "no image"}, got)

	transient := domain.Errorf(domain.CodeUnavailable, "timeout")
	got, err = runJob(t, true, transient)
	assert.ErrorIs(t, err, transient, "a transient failure is retried")
	assert.True(t, platformerr.IsUpstream(err), "marked the external system's, so it spends no attempt of the job")
	assert.Equal(t, outcome{called: true}, got)

	keyring := domain.Errorf(domain.CodeInternal, "credentials cannot be opened")
	got, err = runJob(t, true, jobs.Retry(keyring))
	assert.Same(t, keyring, err, "Retry returns the error as it is, whatever its code")
	assert.False(t, platformerr.IsUpstream(err), "ours: it spends an attempt")
	assert.Equal(t, outcome{called: true}, got)
}

func TestJobRefusesAPayloadWithoutItsIDs(t *testing.T) {
	h := jobs.NewHandler(jobs.Job[testPayload, string, string]{Event: "test.job"},
		memory.NewUnitOfWork(memory.NewDB()), system.NewClock(), nil)
	err := h.Handle(context.Background(), ports.Message{ID: uuid.New(), Type: "test.job", WorkspaceID: uuid.New(), Payload: []byte(`{}`)})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "%v", err)
}
