package apitest

import (
	"context"
	"testing"

	"github.com/uptrace/bun"
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
