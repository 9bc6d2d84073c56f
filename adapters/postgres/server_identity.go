package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncehq/once/ports"
)

// ServerIdentity implements ports.StoreEpoch for the pools it is given to
// (Pool.Server): it learns which server each new connection reached, and
// its epoch moves on whenever that may no longer be the server whose data
// the process read before:
//
//   - a new connection reaches a server of another identity than the last
//     one: another cluster (pg_control_system's system identifier), another
//     history of the same cluster (the timeline, which a promoted standby or
//     a point-in-time restore starts anew), or another address
//     (inet_server_addr and port: another host of a multi-host DSN, a
//     moved name). Asking costs one short statement per new connection,
//     which a pool makes rarely;
//   - a connection of the pool died under the process (its server went
//     away: crashed, restarted, failed over). Through a pooler the
//     process's own connections may survive a failover behind it, and the
//     next connection it opens may come much later; a dead connection is
//     the first sign it gets, so it counts as a change too. A connection
//     the pool retires (idle, too old) does not.
//
// The first identity learnt is the baseline: a process that starts has
// nothing to forget.
//
// Neither is enough behind a pooler in transaction mode: an operator points
// the pooler at the promoted standby and reloads it, the pooler closes its
// server connections to the old server as they come free, and the
// process's own connections to the pooler stay up, answer, and meet no
// failure. So behind such a pooler Confirm asks which server answers, on a
// connection of the pool, before the process answers from memory.
type ServerIdentity struct {
	epoch atomic.Uint64
	mu    sync.Mutex
	known serverFingerprint
	seen  bool
	// through is the pool Confirm asks through: set by OpenPool for a
	// pool behind a transaction pooler, nil otherwise.
	through atomic.Pointer[UnitOfWork]
}

var _ ports.StoreEpoch = (*ServerIdentity)(nil)

// NewServerIdentity returns an identity that has seen no server yet.
func NewServerIdentity() *ServerIdentity { return &ServerIdentity{} }

// Epoch implements ports.StoreEpoch.
func (s *ServerIdentity) Epoch() uint64 { return s.epoch.Load() }

// Confirm implements ports.StoreEpoch. Without a pooler in between, a
// server changes only with the connection, which Epoch has heard of: it
// costs nothing. Behind a transaction pooler it asks, through the pool,
// which server answers the next transaction (one short statement, waiting
// for a connection at most the pool's acquire timeout), as a new
// connection does.
func (s *ServerIdentity) Confirm(ctx context.Context) (uint64, error) {
	uow := s.through.Load()
	if uow == nil {
		return s.Epoch(), nil
	}
	conn, err := uow.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	err = conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*pipelinedConn)
		if !ok {
			return errors.New("postgres: a connection not made by OpenPool")
		}
		return s.identify(ctx, pc.Conn.Conn())
	})
	if err != nil {
		if ctx.Err() == nil && serverWentAway(err) {
			s.lost()
		}
		return 0, unavailableError(err)
	}
	return s.Epoch(), nil
}

// confirmThrough makes Confirm ask through uow's pool, or not at all (nil).
func (s *ServerIdentity) confirmThrough(uow *UnitOfWork) { s.through.Store(uow) }

// serverFingerprint is what tells one server (and history) from another.
// A field the server would not tell is empty.
type serverFingerprint struct {
	system   string
	timeline string
	addr     string
}

// identifyServer is the statement run on every new connection. The
// timeline is the first eight hex digits of the current WAL file's name
// (pg_control_checkpoint's timeline lags a promotion until the next
// checkpoint); a standby has no current WAL position, so it reads empty
// there. The functions are executable by any role (PostgreSQL 15). The
// address is the server's side of the connection as the server sees it:
// through a pooler, the server's, not the pooler's.
const identifyServer = `SELECT (SELECT system_identifier FROM pg_control_system())::text,
       CASE WHEN pg_is_in_recovery() THEN '' ELSE left(pg_walfile_name(pg_current_wal_lsn()), 8) END,
       coalesce(host(inet_server_addr()) || ':' || inet_server_port(), '')`

// identify asks conn's server who it is and records the answer. A server
// that refuses the statement (a role without the functions' privilege, a
// pooler's admin console) is known by the connection's address alone; an
// error of the connection itself is returned: the connection is no good.
func (s *ServerIdentity) identify(ctx context.Context, conn *pgx.Conn) error {
	var f serverFingerprint
	err := conn.QueryRow(ctx, identifyServer, pgx.QueryExecModeSimpleProtocol).Scan(&f.system, &f.timeline, &f.addr)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		f = serverFingerprint{addr: conn.PgConn().Conn().RemoteAddr().String()}
	} else if err != nil {
		return err
	}
	s.observe(f)
	return nil
}

// observe records the identity of a new connection's server.
func (s *ServerIdentity) observe(f serverFingerprint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen && f != s.known {
		s.epoch.Add(1)
	}
	s.known, s.seen = f, true
}

// lost records that a connection died under the process.
func (s *ServerIdentity) lost() { s.epoch.Add(1) }
