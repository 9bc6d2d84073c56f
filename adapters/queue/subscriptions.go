package queue

import (
	"context"
	"fmt"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/ports"
)

// ErrSubscriberClosed is what a closed subscriber answers: the broker's
// side is gone, not the message's fault.
var ErrSubscriberClosed = fmt.Errorf("%w: subscriber closed", ports.ErrBrokerUnreachable)

// Subscriptions is the lifecycle the subscribers of our brokers share:
// each subscription runs until its context ends or the subscriber closes,
// and Close returns once every one has ended and closed its channel.
// The zero value is ready.
type Subscriptions struct {
	mu      sync.Mutex
	closed  bool
	closing chan struct{}
	running sync.WaitGroup
}

// Start runs serve in its own goroutine with a context that ends with ctx
// or at Close, and closes out when serve returns. It fails once Close was
// called.
func (s *Subscriptions) Start(ctx context.Context, out chan *message.Message, serve func(context.Context)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSubscriberClosed
	}
	if s.closing == nil {
		s.closing = make(chan struct{})
	}
	ctx, cancel := context.WithCancel(ctx)
	closing := s.closing
	s.running.Add(2)
	go func() {
		defer s.running.Done()
		select {
		case <-closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	go func() {
		defer s.running.Done()
		defer cancel()
		defer close(out)
		serve(ctx)
	}()
	return nil
}

// Closed reports whether Close was called.
func (s *Subscriptions) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close ends every subscription and waits until each has returned. It
// reports whether this call closed them (false after the first).
func (s *Subscriptions) Close() bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	if s.closing != nil {
		close(s.closing)
	}
	s.mu.Unlock()
	s.running.Wait()
	return true
}
