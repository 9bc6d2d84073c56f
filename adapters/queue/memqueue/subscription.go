package memqueue

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// subscription hands out its topic's messages while its window has room,
// and follows each one handed out until it is acked, nacked or the
// subscription ends.
type subscription struct {
	q       *Queue
	t       *topic
	out     chan *message.Message
	unacked int // guarded by q.mu
	waiters sync.WaitGroup
}

func (s *subscription) run(ctx context.Context) {
	defer s.waiters.Wait()
	for {
		s.q.mu.Lock()
		front := s.t.ready.Front()
		if front == nil || s.unacked >= s.q.cfg.Prefetch {
			wake := s.t.changed
			s.q.mu.Unlock()
			select {
			case <-wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		published := s.t.ready.Remove(front).(*message.Message)
		s.unacked++
		s.q.mu.Unlock()
		msg := published.Copy()
		msg.SetContext(ctx)
		select {
		case s.out <- msg:
			s.waiters.Add(1)
			go s.await(ctx, published, msg)
		case <-ctx.Done():
			s.putBack(published)
			return
		}
	}
}

// await drops published once msg is acked; a nack (after NackDelay) or the
// subscription's end puts it back at the front of the FIFO.
func (s *subscription) await(ctx context.Context, published, msg *message.Message) {
	defer s.waiters.Done()
	select {
	case <-msg.Acked():
		s.done()
	case <-msg.Nacked():
		t := time.NewTimer(s.q.cfg.NackDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		s.putBack(published)
	case <-ctx.Done():
		select {
		case <-msg.Acked(): // an ack that raced the end still counts
			s.done()
		default:
			s.putBack(published)
		}
	}
}

// done frees msg's place in the window: it is dropped for good.
func (s *subscription) done() {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	s.unacked--
	s.t.signal()
}

// putBack frees published's place in the window and puts it first in its
// FIFO.
func (s *subscription) putBack(published *message.Message) {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	s.unacked--
	s.t.ready.PushFront(published)
	s.t.signal()
}
