package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
// test itself works through any pooler. Whether the pooler keeps prepared
// statements for its clients is PoolerKeepsPreparedStatements' question.
func FindTransactionPooler(ctx context.Context, dsn string) (bool, error) {
	return withTwoSessions(ctx, dsn, func(a, b *pgx.Conn) (bool, error) {
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
	})
}

// PoolerKeepsPreparedStatements tells whether, through the pooler in
// transaction mode that dsn reaches, a statement a client prepared in one
// transaction can be executed in a later one (PgBouncer 1.21 and later
// with max_prepared_statements keeps them per client and prepares them on
// whichever server connection serves it; older ones pass the names to the
// server connection of the moment). Two connections prepare a statement
// of one name and then each executes it: a pooler that passes names on
// either hands the second its server connection with the name taken
// (SQLSTATE 42P05; PgBouncer hands out the connection freed last) or one
// without the first's (26000). Each round uses a name of its own, so a
// server connection left holding one never collides with a later probe.
func PoolerKeepsPreparedStatements(ctx context.Context, dsn string) (bool, error) {
	return withTwoSessions(ctx, dsn, func(a, b *pgx.Conn) (bool, error) {
		for range poolerRounds {
			name := "once_pooler_probe_" + rand.Text()
			for _, step := range []func() error{
				func() error { return prepare(ctx, a, name) },
				func() error { return prepare(ctx, b, name) },
				func() error { return execute(ctx, a, name) },
				func() error { return execute(ctx, b, name) },
			} {
				err := step()
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && (pgErr.Code == "42P05" || pgErr.Code == "26000") {
					return false, nil
				}
				if err != nil {
					return false, fmt.Errorf("postgres: finding out whether the pooler keeps prepared statements: %w", err)
				}
			}
		}
		return true, nil
	})
}

func prepare(ctx context.Context, conn *pgx.Conn, name string) error {
	_, err := conn.PgConn().Prepare(ctx, name, "SELECT 1", nil)
	return err
}

func execute(ctx context.Context, conn *pgx.Conn, name string) error {
	_, err := conn.PgConn().ExecPrepared(ctx, name, nil, nil, nil).Close()
	return err
}

// withTwoSessions opens two connections of dsn's for a probe, runs probe
// on them and closes them.
func withTwoSessions(ctx context.Context, dsn string, probe func(a, b *pgx.Conn) (bool, error)) (bool, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false, fmt.Errorf("postgres: %w", err)
	}
	var conns [2]*pgx.Conn
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.Close(context.WithoutCancel(ctx))
			}
		}
	}()
	for i := range conns {
		if conns[i], err = pgx.ConnectConfig(ctx, cfg); err != nil {
			return false, &ConnectError{Addr: address(cfg.Config), Database: cfg.Database, User: cfg.User, Err: err}
		}
	}
	return probe(conns[0], conns[1])
}
