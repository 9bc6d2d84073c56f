package apitest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// CountRows counts the rows of table in the server's workspace, reading as
// the application role under row-level security (PostgreSQL only).
func (s *Server) CountRows(t testing.TB, table string) int {
	t.Helper()
	if s.PG == nil {
		t.Fatal("CountRows needs PostgreSQL")
	}
	var n int
	err := s.PG.App.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.workspace_id', ?, true)", s.Workspace.String()); err != nil {
			return err
		}
		return tx.NewSelect().TableExpr("?", bun.Ident(table)).ColumnExpr("count(*)").Scan(ctx, &n)
	})
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// Events lists the server workspace's outbox events, oldest first.
func (s *Server) Events(t testing.TB) []model.OutboxEvent {
	t.Helper()
	var events []model.OutboxEvent
	err := s.UoW.Transact(context.Background(), s.Workspace, func(ctx context.Context, tx ports.Tx) error {
		var err error
		events, err = tx.Outbox().List(ctx, "", 100000)
		return err
	})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	return events
}

// RequestToken is the request token the job of operation carries to the
// external systems (domain/model/request_token.go), read from its event.
func (s *Server) RequestToken(t testing.TB, operation uuid.UUID) string {
	t.Helper()
	for _, e := range s.Events(t) {
		var job model.JobOperation
		if json.Unmarshal(e.Payload, &job) == nil && job.OperationID == operation {
			if job.RequestToken == "" {
				t.Fatalf("the job of operation %s carries no request token", operation)
			}
			return job.RequestToken
		}
	}
	t.Fatalf("no event starts operation %s", operation)
	return ""
}
