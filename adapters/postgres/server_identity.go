package postgres

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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
	// log and observer hear when the process loses its server and finds
	// one again (Report); nil: nobody.
	log      *slog.Logger
	observer ServerObserver
	// down: a connection died under the process and no new one has
	// reached a server since; downSince is when it died.
	down      bool
	downSince time.Time
}

// ServerObserver hears when the process loses its database server (the
// first connection that died under it: a restart, a failover, a
// switchover) and when a new connection finds one again, and whether it
// is another one (another address, timeline or cluster: a promoted
// standby). A metric; it must return quickly.
type ServerObserver interface {
	PrimaryLost()
	PrimaryFound(changed bool)
}

// Report makes s log, once per change, that the process lost its server
// and found one again, and tell observer (either may be nil). Under
// Patroni or a managed failover this is how an operator sees the
// processes follow the leader without a restart. Call it before the pool
// is used.
func (s *ServerIdentity) Report(log *slog.Logger, observer ServerObserver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if log != nil {
		log = log.With(slog.String("component", "postgres"))
	}
	s.log, s.observer = log, observer
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
	changed := s.seen && f != s.known
	if changed {
		s.epoch.Add(1)
	}
	if changed || s.down {
		s.found(f, changed)
	}
	s.known, s.seen, s.down = f, true, false
}

// found reports a server found after a loss, or another server than the
// last (s.mu held).
func (s *ServerIdentity) found(f serverFingerprint, changed bool) {
	if s.log != nil {
		attrs := []any{slog.String("server", f.addr), slog.String("timeline", f.timeline), slog.Bool("another_server", changed),
			slog.Bool("standby", f.timeline == "" && f.system != "")}
		if s.down {
			attrs = append(attrs, slog.String("down_for", time.Since(s.downSince).Round(time.Millisecond).String()))
		}
		if changed {
			attrs = append(attrs, slog.String("previous_server", s.known.addr), slog.String("previous_timeline", s.known.timeline))
		}
		s.log.Info("found the database server: new connections reach it", attrs...)
	}
	if s.observer != nil {
		s.observer.PrimaryFound(changed)
	}
}

// lost records that a connection died under the process, and reports the
// first such death after a server was found.
func (s *ServerIdentity) lost() {
	s.epoch.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down || !s.seen {
		return
	}
	s.down, s.downSince = true, time.Now()
	if s.log != nil {
		s.log.Warn("lost the database server: a connection died under the process (restart, failover or switchover); "+
			"requests get 503 UNAVAILABLE until a new connection finds the primary",
			slog.String("server", s.known.addr), slog.String("timeline", s.known.timeline))
	}
	if s.observer != nil {
		s.observer.PrimaryLost()
	}
}
