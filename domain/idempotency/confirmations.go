package idempotency

import (
	"context"
	"sync"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// confirmations shares the store's confirmation of its epoch
// (ports.StoreEpoch.Confirm) among the cache hits that need it at once.
// Behind a pooler each Confirm takes a pool connection before any
// workspace limit applies, so a retry storm of one workspace would
// otherwise hold the pool and turn every replay into a 503. Here at most
// one Confirm runs at a time: a hit that arrives while one runs waits for
// the next, which begins once that one ends and answers every hit that
// arrived meanwhile. No hit is answered by a confirmation that began
// before it arrived, so sharing opens no window a Confirm of its own
// would not have: a storm costs one query at a time, and a hit waits at
// most two.
type confirmations struct {
	epoch   ports.StoreEpoch
	mu      sync.Mutex
	running bool
	// next is the round that the hits arriving while one runs wait for.
	next *confirmRound
}

// confirmRound is one Confirm and the hits waiting for it. It runs on a
// context of its own, ended once no hit waits any more: a hit that gives
// up does not fail the others.
type confirmRound struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int
	done    chan struct{}
	epoch   uint64
	err     error
}

func (c *confirmations) confirm(ctx context.Context) (uint64, error) {
	c.mu.Lock()
	r := c.next
	if r == nil {
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r = &confirmRound{ctx: rctx, cancel: cancel, done: make(chan struct{})}
		c.next = r
	}
	r.waiters++
	if !c.running {
		c.start()
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.epoch, r.err
	case <-ctx.Done():
		c.mu.Lock()
		if r.waiters--; r.waiters == 0 {
			r.cancel()
			if c.next == r {
				c.next = nil
			}
		}
		c.mu.Unlock()
		return 0, domain.Wrap(domain.CodeUnavailable, ctx.Err(), "database unavailable, try again")
	}
}

// start runs the next round; c.mu is held.
func (c *confirmations) start() {
	r := c.next
	c.next, c.running = nil, true
	go func() {
		epoch, err := c.epoch.Confirm(r.ctx)
		r.cancel()
		c.mu.Lock()
		defer c.mu.Unlock()
		r.epoch, r.err = epoch, err
		close(r.done)
		c.running = false
		if c.next != nil {
			c.start()
		}
	}()
}
