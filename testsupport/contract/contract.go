// Package contract is the one test suite every implementation of the
// persistence ports must pass: the memory adapter and the PostgreSQL adapter
// run the same Run, so a use case tested against memory behaves the same in
// production.
//
// The suite assumes only what the port doc comments say. It needs no empty
// database: every test makes its own workspaces with fresh random ids, so
// runs against one shared database never see each other's rows.
//
// Failures are the last statement of their transaction and fn returns them:
// in PostgreSQL a failed statement aborts the transaction, so nothing useful
// can follow it.
package contract

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Harness is what the suite tests: a unit of work and the cross-workspace
// discoveries, built over one shared state.
type Harness struct {
	UoW             ports.UnitOfWork
	Discovery       ports.IdempotencyDiscovery
	OutboxDiscovery ports.OutboxDiscovery
	OutboxBacklog   ports.OutboxBacklog
	// OutboxPartitions slices dispatched events in at most one hour.
	OutboxPartitions ports.OutboxPartitions
	// RelayMarks settles the events a writer relays itself; nil skips
	// those tests.
	RelayMarks ports.OutboxRelayMarks
	// CatalogItems counts a store's catalogue as the transaction tx sees
	// it: the port has no read of what UpsertItems wrote, so each adapter's
	// test reads it its own way.
	CatalogItems func(ctx context.Context, tx ports.Tx, store uuid.UUID) (int, error)
	// APIKeyDirectory finds API keys across workspaces.
	APIKeyDirectory ports.APIKeyDirectory
}

// Run runs the whole suite. newHarness is called once per group of tests;
// it may return a fresh state each time or share one.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	groups := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"Workspaces", testWorkspaces},
		{"Members", testMembers},
		{"Tables", testTables},
		{"Outbox", testOutbox},
		{"OutboxDispatch", testOutboxDispatch},
		{"OutboxBacklog", testOutboxBacklog},
		{"OutboxRetention", testOutboxRetention},
		{"OutboxRelay", testOutboxRelay},
		{"OutboxJobs", testOutboxJobs},
		{"DeadLetterStage", testDeadLetterStage},
		{"OutboxOrdering", testOutboxOrdering},
		{"OutboxWaits", testOutboxWaits},
		{"OutboxParkedList", testOutboxParkedList},
		{"OutboxUndelivered", testOutboxUndelivered},
		{"OutboxUndeliveredByDestination", testOutboxUndeliveredByDestination},
		{"Transactions", testTransactions},
		{"Idempotency", testIdempotency},
		{"IdempotencyReplays", testIdempotencyReplays},
		{"IdempotencyCleanup", testIdempotencyCleanup},
		{"Concurrency", testConcurrency},
		{"OperationList", testOperationList},
		{"OperationOutcomes", testOperationOutcomes},
		{"OperationCancel", testOperationCancel},
		{"Products", testProducts},
		{"LiveKeys", testLiveKeys},
		{"Kinds", testKinds},
		{"Lists", testLists},
		{"MemberAdmin", testMemberAdmin},
		{"WebhookEndpoints", testWebhookEndpoints},
		{"APIKeys", testAPIKeys},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, newHarness(t)) })
	}
}

// errRollback is what test functions return to roll a transaction back.
var errRollback = errors.New("contract: roll back on purpose")

// transact runs fn in a transaction of workspace and returns Transact's error.
func transact(t *testing.T, h Harness, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	t.Helper()
	return h.UoW.Transact(t.Context(), workspace, fn)
}

// mustTransact runs fn in a transaction of workspace that must commit.
func mustTransact(t *testing.T, h Harness, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) {
	t.Helper()
	require.NoError(t, transact(t, h, workspace, fn))
}

// query runs read in a transaction of workspace and returns what it read
// and Transact's error.
func query[T any](t *testing.T, h Harness, workspace uuid.UUID, read func(ctx context.Context, tx ports.Tx) (T, error)) (T, error) {
	t.Helper()
	return ports.Query(t.Context(), h.UoW, workspace, read)
}

// mustQuery is query in a transaction that must commit.
func mustQuery[T any](t *testing.T, h Harness, workspace uuid.UUID, read func(ctx context.Context, tx ports.Tx) (T, error)) T {
	t.Helper()
	v, err := query(t, h, workspace, read)
	require.NoError(t, err)
	return v
}

// ids are the ids of rows, in their order.
func ids[E any](rows []E, id func(E) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(rows))
	for _, row := range rows {
		out = append(out, id(row))
	}
	return out
}

// requireCode asserts err is a domain error with code.
func requireCode(t *testing.T, err error, code domain.Code) {
	t.Helper()
	require.Error(t, err, "want an error with code %s", code)
	require.Equal(t, code, domain.ErrorCode(err), "error: %v", err)
}

// now is the current time as a database keeps it: UTC, microseconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// dbTime normalizes a time read back for comparison: the suite compares
// instants at microsecond precision, whatever the location.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// newWorkspace creates a workspace with a fresh id and returns the id.
func newWorkspace(t *testing.T, h Harness) uuid.UUID {
	t.Helper()
	id := uuid.New()
	mustTransact(t, h, id, func(ctx context.Context, tx ports.Tx) error {
		return tx.Workspaces().Create(ctx, model.Workspace{ID: id, Name: "contract " + id.String()[:8], CreatedAt: now()})
	})
	return id
}

// newMember adds a fresh user to workspace and returns the user's id.
func newMember(t *testing.T, h Harness, workspace uuid.UUID) uuid.UUID {
	t.Helper()
	user := uuid.New()
	mustTransact(t, h, workspace, func(ctx context.Context, tx ports.Tx) error {
		return tx.Members().Add(ctx, model.Member{WorkspaceID: workspace, UserID: user, Role: model.RoleAdmin, CreatedAt: now()})
	})
	return user
}

// within runs fn in a goroutine and fails the test if it has not returned
// after d. It returns fn's error, or an error saying it timed out.
func within(t *testing.T, d time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Errorf("%s did not return within %s", what, d)
		return fmt.Errorf("%s timed out", what)
	}
}
