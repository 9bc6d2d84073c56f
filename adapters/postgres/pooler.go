package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// poolerRounds is how many times FindTransactionPooler tries. PgBouncer
// hands a transaction the server connection freed last, so the first round
// tells; a pooler that deals them round-robin over many idle ones may place
// one round's three transactions as a direct connection would, and more
// rounds make that unlikely.
const poolerRounds = 3

// serverSession names the server session a statement ran in: a backend's
// pid is unique within a running server, and the postmaster's start time
// tells servers (and restarts) apart.
const serverSession = `SELECT pg_backend_pid()::text || '@' || pg_postmaster_start_time()::text`

// FindTransactionPooler tells whether dsn reaches PostgreSQL through a
// pooler in transaction (or statement) mode, which hands each transaction
// whichever server connection is free. It opens two connections of its
// own and runs one-statement transactions on them in turn, A, B, A: on
// PostgreSQL itself, or through a pooler in session mode, a connection
// keeps its server session for its life, so A's two transactions run in
// one session and B's in another. Through a transaction pooler A meets
// another session the second time, or B the one A just freed.
//
// The statements go by the simple protocol, which prepares nothing, so the
// test itself works through any pooler. What it cannot see is whether the
// pooler keeps prepared statements for its clients (PgBouncer 1.21 and
// later with max_prepared_statements): that only the operator can say.
func FindTransactionPooler(ctx context.Context, dsn string) (bool, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false, fmt.Errorf("postgres: %w", err)
	}
	var conns [2]*pgx.Conn
	for i := range conns {
		if conns[i], err = pgx.ConnectConfig(ctx, cfg); err != nil {
			return false, &ConnectError{Addr: address(cfg.Config), Database: cfg.Database, User: cfg.User, Err: err}
		}
		defer conns[i].Close(context.WithoutCancel(ctx))
	}
	a, b := conns[0], conns[1]
	for range poolerRounds {
		var sessions [3]string
		for i, conn := range []*pgx.Conn{a, b, a} {
			if err := conn.QueryRow(ctx, serverSession, pgx.QueryExecModeSimpleProtocol).Scan(&sessions[i]); err != nil {
				return false, fmt.Errorf("postgres: finding out whether a pooler is in between: %w", err)
			}
		}
		a1, b1, a2 := sessions[0], sessions[1], sessions[2]
		if a1 != a2 || b1 == a1 || b1 == a2 {
			return true, nil
		}
	}
	return false, nil
}
