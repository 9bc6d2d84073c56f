package redisstream

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// refreshBatch is how many entry ids one XCLAIM of refresh names.
const refreshBatch = 1000

// fetch fills the window until ctx ends: entries other consumers left idle
// (claim) first when a claim is due, else new ones (XREADGROUP ">", COUNT
// the room left, BLOCK BlockTime). Every MaxIdleTime/3 it refreshes the
// entries held. A failing Redis is retried with a backoff up to 5s.
func (s *subscription) fetch(ctx context.Context) {
	claims := time.NewTicker(s.cfg.ClaimInterval)
	defer claims.Stop()
	refreshes := time.NewTicker(max(s.cfg.MaxIdleTime/3, time.Millisecond))
	defer refreshes.Stop()
	claimDue := true // at start: what a dead consumer left waits no longer
	backoff := retryBackoff{}
	for ctx.Err() == nil {
		room, wake := s.free()
		select {
		case <-refreshes.C:
			s.refresh(ctx)
			continue
		case <-claims.C:
			claimDue = true
		default:
		}
		if room <= 0 {
			select {
			case <-wake:
			case <-refreshes.C:
				s.refresh(ctx)
			case <-claims.C:
				claimDue = true
			case <-ctx.Done():
			}
			continue
		}
		var err error
		if claimDue {
			err = s.claim(ctx, room)
			claimDue = err != nil
		} else {
			err = s.read(ctx, room)
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("redisstream: reading the stream failed; retrying", "error", err)
			sleep(ctx, backoff.next())
			continue
		}
		backoff = retryBackoff{}
	}
}

// read takes up to count new entries, waiting at most BlockTime for one.
func (s *subscription) read(ctx context.Context, count int) error {
	streams, err := s.client.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group:    s.cfg.ConsumerGroup,
		Consumer: s.cfg.Consumer,
		Streams:  []string{s.stream, ">"},
		Count:    int64(count),
		Block:    s.cfg.BlockTime,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, xs := range streams {
		s.take(ctx, xs.Messages)
	}
	return nil
}

// claim takes over up to room entries that have been pending, with any
// consumer, for MaxIdleTime: their consumer died, or lost them. XAUTOCLAIM
// makes each ours only if it is still that idle, so two consumers claiming
// at once do not both get it; entries deleted from the stream meanwhile it
// drops from the group by itself.
func (s *subscription) claim(ctx context.Context, room int) error {
	start := "0-0"
	for room > 0 {
		entries, next, err := s.client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream:   s.stream,
			Group:    s.cfg.ConsumerGroup,
			Consumer: s.cfg.Consumer,
			MinIdle:  s.cfg.MaxIdleTime,
			Start:    start,
			Count:    int64(room),
		}).Result()
		if err != nil {
			return err
		}
		room -= s.take(ctx, entries)
		if next == "0-0" || next == "" {
			return nil
		}
		start = next
	}
	return nil
}

// refresh resets the idle time of every entry this subscription holds
// (XCLAIM to itself, JUSTID, which leaves the delivery count alone). The
// worker may keep thousands of messages waiting in its buffer while it
// schedules them fairly, longer than MaxIdleTime: without this, a live
// consumer's waiting entries would look abandoned and another consumer
// would take them over and run them too. Refreshing every MaxIdleTime/3
// leaves two refreshes of slack. An entry another consumer took over all
// the same (this one stalled) comes back to this one; both run it, which
// the handlers tolerate, and either's XACK settles it.
func (s *subscription) refresh(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.held))
	for id := range s.held {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for len(ids) > 0 {
		batch := ids[:min(len(ids), refreshBatch)]
		ids = ids[len(batch):]
		err := s.client.XClaimJustID(ctx, &redis.XClaimArgs{
			Stream:   s.stream,
			Group:    s.cfg.ConsumerGroup,
			Consumer: s.cfg.Consumer,
			MinIdle:  0,
			Messages: batch,
		}).Err()
		if err != nil && ctx.Err() == nil {
			s.log.Warn("redisstream: refreshing the entries held failed", "entries", len(batch), "error", err)
			return
		}
	}
}

// retryBackoff doubles from 100ms to 5s.
type retryBackoff struct{ last time.Duration }

func (b *retryBackoff) next() time.Duration {
	b.last = min(max(2*b.last, 100*time.Millisecond), 5*time.Second)
	return b.last
}
