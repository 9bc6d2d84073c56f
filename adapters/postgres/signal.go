package postgres

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

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

// operationEndsChannel is the NOTIFY channel that says "these operations
// ended". Each payload is a comma-separated list of operation ids (ids
// only: nothing a listener may not see), or empty for "any may have
// ended" when a Signal had more ends pending than it keeps.
const operationEndsChannel = "once_operation_ends"

// notifyOperationEnds sends one notification per payload, all in one
// autocommit statement, after the ends committed (see notifyOutbox).
const notifyOperationEnds = `SELECT pg_notify('once_operation_ends', p) FROM unnest(?::text[]) AS p`

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
	// endsPerPayload keeps a payload (37 bytes an id) under PostgreSQL's
	// 8000-byte limit.
	endsPerPayload = 200
	// maxPendingEnds bounds the ends kept while NOTIFYs fail (the database
	// is away); past it they are dropped for one empty payload, which
	// wakes every waiter.
	maxPendingEnds = 10_000
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
//
// A Signal is also the ports.OperationEnds of its process, on channel
// once_operation_ends of the same connections: Ended tells this process's
// listener at once and the others through one coalesced NOTIFY; the
// LISTEN connection, started by Listen as by Wake, relays what the others
// ended and calls Missed whenever it (re)connects.
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
	// listening starts the LISTEN loop once, on the first Wake or Listen.
	listening sync.Once
	// outboxDue says that a NOTIFY once_outbox is due.
	outboxDue atomic.Bool
	// endsMu guards ends and endsOverflow: the operations ended since the
	// last NOTIFY once_operation_ends, and whether some were dropped.
	endsMu       sync.Mutex
	ends         []string
	endsOverflow bool
	listener     atomic.Pointer[ports.OperationEndListener]
}

var (
	_ ports.DispatchSignal = (*Signal)(nil)
	_ ports.OperationEnds  = (*Signal)(nil)
)

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
	s.outboxDue.Store(true)
	s.requestNotify()
}

// Ended implements ports.OperationEnds. It never blocks.
func (s *Signal) Ended(ids ...uuid.UUID) {
	if l := s.listener.Load(); l != nil {
		(*l).Heard(ids)
	}
	s.endsMu.Lock()
	if len(s.ends)+len(ids) > maxPendingEnds {
		s.ends, s.endsOverflow = nil, true
	} else if !s.endsOverflow {
		for _, id := range ids {
			s.ends = append(s.ends, id.String())
		}
	}
	s.endsMu.Unlock()
	s.requestNotify()
}

// requestNotify asks the notify loop for a round.
func (s *Signal) requestNotify() {
	select {
	case s.notify <- struct{}{}:
	default: // a NOTIFY is pending already; it covers this request too
	}
}

// Wake implements ports.DispatchSignal. The first call starts listening.
func (s *Signal) Wake() <-chan struct{} {
	s.startListening()
	return s.wake
}

// Listen implements ports.OperationEnds: l hears this process's ends at
// once and the others' once the LISTEN connection, started now if it was
// not, is up.
func (s *Signal) Listen(l ports.OperationEndListener) {
	s.listener.Store(&l)
	s.startListening()
}

func (s *Signal) startListening() {
	s.listening.Do(func() {
		if s.ctx.Err() != nil {
			return // closed
		}
		s.wg.Add(1)
		go s.listenLoop(s.ctx)
	})
}

// missed tells the listener, if any, that ends may have gone unheard.
func (s *Signal) missed() {
	if l := s.listener.Load(); l != nil {
		(*l).Missed()
	}
}

// heard tells the listener, if any, what a once_operation_ends payload
// says; an empty or unreadable one means any operation may have ended.
func (s *Signal) heard(payload string) {
	l := s.listener.Load()
	if l == nil {
		return
	}
	if payload == "" {
		(*l).Missed()
		return
	}
	parts := strings.Split(payload, ",")
	ids := make([]uuid.UUID, 0, len(parts))
	for _, p := range parts {
		id, err := uuid.Parse(p)
		if err != nil {
			(*l).Missed()
			return
		}
		ids = append(ids, id)
	}
	(*l).Heard(ids)
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
		if s.outboxDue.Swap(false) {
			s.notifyOutbox(ctx)
		}
		s.notifyEnds(ctx)
		rest.Reset(notifyCoalesce)
		if !received(ctx, rest.C) {
			return
		}
	}
}

func (s *Signal) notifyOutbox(ctx context.Context) {
	nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	if _, err := s.db.ExecContext(nctx, notifyOutbox); err != nil && ctx.Err() == nil {
		s.log.Warn("outbox notify failed; dispatchers in other processes wake at their next poll", "err", err)
	}
}

// notifyEnds sends the pending ends, endsPerPayload ids a payload, in one
// statement; on a failure it keeps them for the next round (up to
// maxPendingEnds).
func (s *Signal) notifyEnds(ctx context.Context) {
	s.endsMu.Lock()
	ends, overflow := s.ends, s.endsOverflow
	s.ends, s.endsOverflow = nil, false
	s.endsMu.Unlock()
	if len(ends) == 0 && !overflow {
		return
	}
	var payloads []string
	if overflow {
		payloads = []string{""}
	}
	for chunk := range slices.Chunk(ends, endsPerPayload) {
		payloads = append(payloads, strings.Join(chunk, ","))
	}
	nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	_, err := s.db.ExecContext(nctx, notifyOperationEnds, pgdialect.Array(payloads))
	if err == nil || ctx.Err() != nil {
		return
	}
	// Kept for the round the next end or commit asks for, not retried at
	// once: a database that is away would turn a retry into a busy loop.
	s.log.Warn("operation ends notify failed; waiters in other processes hear of them with the next end, or answer when their wait ends", "err", err)
	s.endsMu.Lock()
	if overflow || len(s.ends)+len(ends) > maxPendingEnds {
		s.ends, s.endsOverflow = nil, true
	} else {
		s.ends = append(ends, s.ends...)
	}
	s.endsMu.Unlock()
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
	if _, err := conn.Exec(ctx, "LISTEN "+outboxChannel+"; LISTEN "+operationEndsChannel); err != nil {
		return false, err
	}
	// Anything committed while we were not listening went unheard.
	s.wakeUp()
	s.missed()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if n.Channel == operationEndsChannel {
			s.heard(n.Payload)
		} else {
			s.wakeUp()
		}
	}
}
