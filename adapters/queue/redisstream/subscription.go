package redisstream

import (
	"context"
	"log/slog"
	"sync"
	"time"

	wmredis "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
)

// subscription is one Subscribe: a fetcher (fetch.go) that reads entries
// while the window has room, a sender that hands them out in order, a
// goroutine per entry held that waits for its ack or nack, and an acker
// (acks.go) that sends the acks in batches.
type subscription struct {
	client redis.UniversalClient
	stream string
	cfg    Config
	log    *slog.Logger
	out    chan *message.Message
	acks   chan string

	mu sync.Mutex
	// held is every entry this subscription holds pending in the group:
	// waiting to be handed out, handed out, or acked but not yet XACKed.
	held map[string]struct{}
	// ready waits to be handed out, first to last.
	ready []*message.Message
	// unacked counts the entries handed out or ready and neither acked
	// nor dropped: the window, at most cfg.Prefetch.
	unacked int
	// changed is closed, and replaced, when ready grows or the window
	// frees, to wake the sender and the fetcher.
	changed chan struct{}

	waiters sync.WaitGroup
}

func newSubscription(client redis.UniversalClient, stream string, cfg Config, log *slog.Logger) *subscription {
	return &subscription{
		client:  client,
		stream:  stream,
		cfg:     cfg,
		log:     log,
		out:     make(chan *message.Message),
		acks:    make(chan string, cfg.Prefetch),
		held:    make(map[string]struct{}),
		changed: make(chan struct{}),
	}
}

// run serves the subscription until ctx ends, then sends the acks
// collected.
func (s *subscription) run(ctx context.Context) {
	acked := make(chan struct{})
	go func() { defer close(acked); s.sendAcks(s.acks) }()
	sent := make(chan struct{})
	go func() { defer close(sent); s.handOut(ctx) }()
	s.fetch(ctx)
	<-sent
	s.waiters.Wait()
	close(s.acks)
	<-acked
}

// signal wakes whoever waits on changed; s.mu is held.
func (s *subscription) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// free is how many more entries the window takes, and a channel closed
// when that may have changed.
func (s *subscription) free() (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Prefetch - s.unacked, s.changed
}

// take hands out the entries read or claimed, each as a message of ctx,
// skipping those this subscription already holds (its own entries, seen
// again by a claim). It returns how many it took into the window. An
// entry that is not a message (not written by our publisher) is logged and
// acknowledged: nobody could ever handle it.
func (s *subscription) take(ctx context.Context, entries []redis.XMessage) int {
	var unmarshaller wmredis.DefaultMarshallerUnmarshaller
	n := 0
	for _, e := range entries {
		msg, err := unmarshaller.Unmarshal(e.Values)
		if err != nil {
			s.log.Error("redisstream: dropping an entry that is not a message", "entry", e.ID, "error", err)
			s.acks <- e.ID
			continue
		}
		msg.SetContext(ctx)
		s.mu.Lock()
		if _, dup := s.held[e.ID]; dup {
			s.mu.Unlock()
			continue
		}
		s.held[e.ID] = struct{}{}
		s.unacked++
		s.ready = append(s.ready, msg)
		s.signal()
		s.mu.Unlock()
		n++
		s.waiters.Add(1)
		go s.await(ctx, e.ID, msg)
	}
	return n
}

// handOut sends the ready messages, in order, until ctx ends. It waits for
// the consumer without blocking the fetcher, which keeps refreshing the
// entries held meanwhile.
func (s *subscription) handOut(ctx context.Context) {
	for {
		s.mu.Lock()
		if len(s.ready) == 0 {
			wake := s.changed
			s.mu.Unlock()
			select {
			case <-wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		msg := s.ready[0]
		s.ready[0] = nil
		s.ready = s.ready[1:]
		s.mu.Unlock()
		select {
		case s.out <- msg:
		case <-ctx.Done():
			return
		}
	}
}

// await follows one entry's message until it is acked, or ctx ends. A
// nacked message is handed out again, a fresh copy, after NackDelay; it
// keeps its place in the window meanwhile.
func (s *subscription) await(ctx context.Context, id string, msg *message.Message) {
	defer s.waiters.Done()
	for {
		select {
		case <-msg.Acked():
			s.ack(id)
			return
		case <-msg.Nacked():
			if !sleep(ctx, s.cfg.NackDelay) {
				return
			}
			msg = msg.Copy()
			msg.SetContext(ctx)
			s.mu.Lock()
			s.ready = append(s.ready, msg)
			s.signal()
			s.mu.Unlock()
		case <-ctx.Done():
			// An ack that raced the end still counts.
			select {
			case <-msg.Acked():
				s.ack(id)
			default:
			}
			return
		}
	}
}

// ack frees the entry's place in the window and queues its XACK; the entry
// stays held (refreshed) until the XACK is sent.
func (s *subscription) ack(id string) {
	s.mu.Lock()
	s.unacked--
	s.signal()
	s.mu.Unlock()
	s.acks <- id
}

// sleep waits d, or returns false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
