package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/ports"
)

// outboxChannel is the NOTIFY channel that says "events were committed".
// The payload is empty: a Dispatcher that wakes asks discovery what is due.
const outboxChannel = "once_outbox"

// notifyOutbox is sent on the pool, in its own autocommit statement, never in
// a business transaction: a NOTIFY in the producer's transaction takes a
// database-wide lock at commit and flattened commits to 3-5k/s whatever the
// client count. NOTIFY and LISTEN need no table privilege (any
// role may call pg_notify and LISTEN), so the application role can send and
// hear it; notifications reach only sessions of the same database.
const notifyOutbox = `SELECT pg_notify('once_outbox', '')`

const (
	// notifyCoalesce is the least time between two NOTIFYs of one Signal:
	// Committed calls within it share one notification.
	notifyCoalesce = 5 * time.Millisecond
	// notifyTimeout bounds one NOTIFY; a wake-up that is late is useless,
	// the Dispatchers' polling covers a lost one.
	notifyTimeout = 5 * time.Second
	// listenBackoffMin and listenBackoffMax bound the wait between attempts
	// to re-establish the LISTEN connection.
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 30 * time.Second
)

// Signal implements ports.DispatchSignal across processes with
// LISTEN/NOTIFY on channel once_outbox.
//
//   - Committed wakes this process's Dispatchers at once and asks a
//     background goroutine to send one NOTIFY on the pool. At most one
//     NOTIFY is in flight and at most one is sent per notifyCoalesce: a burst
//     of commits costs one notification, not one per commit.
//   - A second goroutine holds a dedicated pgx connection (outside the pool:
//     LISTEN is per session) that LISTENs and turns every notification into
//     a wake-up. It starts with the first call to Wake, so a process that
//     only produces events (an API without a Dispatcher, a CLI command)
//     holds no LISTEN connection. If the connection breaks it reconnects with exponential
//     backoff, logging at warn, and wakes once after reconnecting, since
//     notifications sent meanwhile were lost.
//
// Wake-ups coalesce in a channel of one, and some are spurious (a process
// hears its own NOTIFY too); the Dispatchers poll as the fallback anyway.
type Signal struct {
	db     *bun.DB
	dsn    string
	log    *slog.Logger
	wake   chan struct{}
	notify chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	// listening starts the LISTEN loop once, on the first Wake.
	listening sync.Once
}

var _ ports.DispatchSignal = (*Signal)(nil)

// NewSignal starts a Signal: NOTIFYs go through db, and once someone waits
// (Wake), a connection of its own to dsn LISTENs. It runs until ctx ends or
// Close is called. log may be nil.
func NewSignal(ctx context.Context, db *bun.DB, dsn string, log *slog.Logger) *Signal {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Signal{
		db:     db,
		dsn:    dsn,
		log:    log.With("component", "outbox_signal"),
		wake:   make(chan struct{}, 1),
		notify: make(chan struct{}, 1),
		ctx:    ctx,
		cancel: cancel,
	}
	s.wg.Add(1)
	go s.notifyLoop(ctx)
	return s
}

// Committed implements ports.DispatchSignal. It never blocks.
func (s *Signal) Committed() {
	s.wakeUp()
	select {
	case s.notify <- struct{}{}:
	default: // a NOTIFY is pending already; it covers this commit too
	}
}

// Wake implements ports.DispatchSignal. The first call starts listening.
func (s *Signal) Wake() <-chan struct{} {
	s.listening.Do(func() {
		if s.ctx.Err() != nil {
			return // closed
		}
		s.wg.Add(1)
		go s.listenLoop(s.ctx)
	})
	return s.wake
}

// Close stops the goroutines and closes the LISTEN connection. It does not
// close db. Safe to call more than once.
func (s *Signal) Close() error {
	s.once.Do(func() {
		s.cancel()
		// Claim the listener's once: a Wake racing with Close either
		// started it already (and Wait sees it) or never will.
		s.listening.Do(func() {})
		s.wg.Wait()
	})
	return nil
}

func (s *Signal) wakeUp() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// notifyLoop sends one NOTIFY per request, then rests notifyCoalesce so the
// requests of that interval fold into the next one.
func (s *Signal) notifyLoop(ctx context.Context) {
	defer s.wg.Done()
	rest := time.NewTimer(0)
	defer rest.Stop()
	for received(ctx, s.notify) {
		nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
		_, err := s.db.ExecContext(nctx, notifyOutbox)
		cancel()
		if err != nil && ctx.Err() == nil {
			s.log.Warn("outbox notify failed; dispatchers in other processes wake at their next poll", "err", err)
		}
		rest.Reset(notifyCoalesce)
		if !received(ctx, rest.C) {
			return
		}
	}
}

// received waits for a value on ch; false if ctx ends first.
func received[T any](ctx context.Context, ch <-chan T) bool {
	select {
	case <-ctx.Done():
		return false
	case <-ch:
		return true
	}
}

// listenLoop keeps a LISTEN connection up for as long as ctx lives.
func (s *Signal) listenLoop(ctx context.Context) {
	defer s.wg.Done()
	backoff := listenBackoffMin
	for {
		listened, err := s.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			backoff = listenBackoffMin // it worked for a while: start over
		}
		s.log.Warn("outbox listen connection lost; reconnecting", "err", err, "backoff", backoff)
		if !received(ctx, time.After(backoff)) {
			return
		}
		backoff = min(backoff*2, listenBackoffMax)
	}
}

// listen connects, LISTENs and relays notifications until an error or ctx
// ends. listened reports whether LISTEN succeeded.
func (s *Signal) listen(ctx context.Context) (listened bool, err error) {
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+outboxChannel); err != nil {
		return false, err
	}
	// Anything committed while we were not listening went unheard.
	s.wakeUp()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
		s.wakeUp()
	}
}
