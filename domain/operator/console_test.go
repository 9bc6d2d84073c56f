package operator_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

type harness struct {
	uow     ports.UnitOfWork
	console *operator.Console
	now     time.Time
}

func newHarness() harness {
	db := memory.NewDB()
	uow := memory.NewUnitOfWork(db)
	clock := fixedClock{time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	admin := dispatch.NewAdmin(uow, clock, nil, nil)
	cancel := jobs.NewFailures(uow, clock, nil)
	return harness{uow: uow, console: operator.NewConsole(memory.NewOutboxDiscovery(db), admin, uow, clock, cancel), now: clock.t}
}

func (h harness) deadLetter(t *testing.T, workspace uuid.UUID, lastError string) model.OutboxEvent {
	return testkit.DeadLetter(t, h.uow, workspace, h.now, lastError)
}

func (h harness) pending(t *testing.T, workspace uuid.UUID) model.OutboxEvent {
	return testkit.PendingEvent(t, h.uow, workspace, h.now.Add(-time.Hour))
}

func TestConsoleGroupsDeadLettersAcrossWorkspacesAndRedrivesAGroup(t *testing.T) {
	h := newHarness()
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	refusedA1 := h.deadLetter(t, a, "cannot publish: connection refused after 3 attempts")
	refusedA2 := h.deadLetter(t, a, "cannot publish: connection refused after 10 attempts")
	refusedB := h.deadLetter(t, b, "cannot publish: connection refused after 3 attempts")
	job := testkit.JobDeadLetter(t, h.uow, b, h.now, 2, model.JobFailure(0, "platform answered 503 for store "+uuid.NewString()))
	h.pending(t, c)

	backlog, err := h.console.Backlog(t.Context())
	require.NoError(t, err)
	require.False(t, backlog.Truncated)
	byWorkspace := map[uuid.UUID]ports.WorkspaceBacklog{}
	for _, w := range backlog.Workspaces {
		byWorkspace[w.Workspace] = w
	}
	assert.Equal(t, ports.WorkspaceBacklog{Workspace: a, DeadLetter: 2}, byWorkspace[a])
	assert.Equal(t, ports.WorkspaceBacklog{Workspace: b, DeadLetter: 2}, byWorkspace[b])
	assert.Equal(t, ports.WorkspaceBacklog{Workspace: c, Pending: 1, OldestDueAge: time.Hour}, byWorkspace[c])

	dl, err := h.console.DeadLetters(t.Context())
	require.NoError(t, err)
	require.Equal(t, 4, dl.Total)
	require.Len(t, dl.Groups, 2)
	refused := dl.Groups[0]
	assert.Equal(t, "delivery", refused.Stage)
	assert.Equal(t, "cannot publish: connection refused after <n> attempts", refused.Cause)
	assert.Equal(t, 2, refused.Workspaces)
	assert.Equal(t, []string{model.EventStoreCredentialsVerify}, refused.EventTypes)
	assert.ElementsMatch(t, []uuid.UUID{refusedA1.ID, refusedA2.ID, refusedB.ID}, ids(refused.Events))
	failedJob := dl.Groups[1]
	assert.Equal(t, "job", failedJob.Stage)
	assert.Equal(t, "job failed: platform answered 503 for store <id>", failedJob.Cause)
	assert.Equal(t, job.LastError, failedJob.Example)

	// One is read in its own workspace only.
	got, err := h.console.DeadLetter(t.Context(), b, job.ID)
	require.NoError(t, err)
	assert.Equal(t, job.LastError, got.LastError)
	_, err = h.console.DeadLetter(t.Context(), a, job.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "another workspace's event: %v", err)

	// The group goes back to pending, in both workspaces; the other stays.
	moved, err := h.console.RedriveGroup(t.Context(), refused.Key)
	require.NoError(t, err)
	assert.Equal(t, 3, moved.Count)
	assert.ElementsMatch(t, []uuid.UUID{refusedA1.ID, refusedA2.ID}, moved.ByWorkspace[a])
	assert.Equal(t, []uuid.UUID{refusedB.ID}, moved.ByWorkspace[b])
	dl, err = h.console.DeadLetters(t.Context())
	require.NoError(t, err)
	require.Len(t, dl.Groups, 1)
	assert.Equal(t, failedJob.Key, dl.Groups[0].Key)
	_, err = h.console.DeadLetter(t.Context(), a, refusedA1.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "re-driven: no longer a dead letter")

	_, err = h.console.RedriveGroup(t.Context(), refused.Key)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "the group is gone")

	// One by id.
	_, err = h.console.Redrive(t.Context(), b, nil)
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "no ids is not 'all'")
	n, err := h.console.Redrive(t.Context(), b, []uuid.UUID{job.ID})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	dl, err = h.console.DeadLetters(t.Context())
	require.NoError(t, err)
	assert.Empty(t, dl.Groups)
}

func ids(events []model.OutboxEvent) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func TestCauseDropsWhatDiffersPerEvent(t *testing.T) {
	for in, want := range map[string]string{
		"lease expired on attempt 7: the dispatcher holding it crashed or hung":              "lease expired on attempt <n>: the dispatcher holding it crashed or hung",
		"job failed: store 0b7a4c1e-6a52-4e43-9a43-1d1c1a4a6a10 answered 429":                "job failed: store <id> answered 429",
		"cannot get object 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08": "cannot get object <id>",
		"  timeout after 30s  ": "timeout after <n>s",
	} {
		assert.Equal(t, want, operator.Cause(in), in)
	}
}

func TestShownPayloadWithholdsSecretLookingPayloads(t *testing.T) {
	ok := model.OutboxEvent{Payload: []byte(`{"store_id":"0b7a4c1e-6a52-4e43-9a43-1d1c1a4a6a10"}`)}
	assert.JSONEq(t, string(ok.Payload), string(operator.ShownPayload(ok)))
	bad := model.OutboxEvent{Payload: []byte(`{"api_key":"sk_live_abc"}`)}
	assert.Nil(t, operator.ShownPayload(bad))
}
