package queuetest

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// NewPair builds, for one test, the publisher under test, publishing under
// prefix (queue.NewPublisher(pub, prefix)), and a subscriber on the same
// broker. It registers the cleanup of both with t.
type NewPair func(t *testing.T, prefix string) (ports.Publisher, message.Subscriber)

// RunPublisherContract checks a ports.Publisher and its broker: every
// message arrives with its id, payload, type, workspace and traceparent;
// messages published while nobody subscribes wait for the subscriber;
// invalid messages and closed publishers fail.
func RunPublisherContract(t *testing.T, newPair NewPair) {
	t.Run("delivers every message of a batch across topics", func(t *testing.T) {
		prefix := Prefix()
		pub, sub := newPair(t, prefix)
		verify := subscribe(t, sub, queue.Topic(prefix, TypeVerify))
		sync := subscribe(t, sub, queue.Topic(prefix, TypeSync))

		batch := []ports.Message{
			newMessage(TypeVerify, 0), newMessage(TypeSync, 1), newMessage(TypeVerify, 2),
			newMessage(TypeSync, 3), newMessage(TypeVerify, 4),
		}
		batch[2].Traceparent = "" // a message written outside a traced request
		batch[4].Payload = nil
		publish(t, pub, batch...)

		checkDelivered(t, []ports.Message{batch[0], batch[2], batch[4]}, verify.take(t, 3))
		checkDelivered(t, []ports.Message{batch[1], batch[3]}, sync.take(t, 2))
		verify.quiet(t, 200*time.Millisecond)
	})

	t.Run("keeps messages published before anyone subscribed", func(t *testing.T) {
		prefix := Prefix()
		pub, sub := newPair(t, prefix)
		first := []ports.Message{newMessage(TypeVerify, 0), newMessage(TypeVerify, 1)}
		publish(t, pub, first...)

		// Publish returned, so the broker holds them: a subscriber that
		// starts only now still receives them, then what follows.
		s := subscribe(t, sub, queue.Topic(prefix, TypeVerify))
		checkDelivered(t, first, s.take(t, 2))
		later := newMessage(TypeVerify, 2)
		publish(t, pub, later)
		checkDelivered(t, []ports.Message{later}, s.take(t, 1))
	})

	t.Run("rejects a message without id or type and publishes nothing", func(t *testing.T) {
		prefix := Prefix()
		pub, sub := newPair(t, prefix)
		noID, noType := newMessage(TypeVerify, 0), newMessage("", 1)
		noID.ID = uuid.Nil
		for _, bad := range []ports.Message{noID, noType} {
			err := pub.Publish(context.Background(), newMessage(TypeVerify, 2), bad)
			if !domain.IsCode(err, domain.CodeValidation) {
				t.Fatalf("Publish(%+v) = %v, want %s", show(bad), err, domain.CodeValidation)
			}
		}
		subscribe(t, sub, queue.Topic(prefix, TypeVerify)).quiet(t, 300*time.Millisecond)
	})

	t.Run("publishing nothing is a no-op", func(t *testing.T) {
		pub, _ := newPair(t, Prefix())
		if err := pub.Publish(context.Background()); err != nil {
			t.Fatalf("Publish() = %v", err)
		}
	})

	t.Run("fails with a canceled context", func(t *testing.T) {
		pub, _ := newPair(t, Prefix())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := pub.Publish(ctx, newMessage(TypeVerify, 0))
		if !domain.IsCode(err, domain.CodeUnavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Publish(canceled) = %v, want %s wrapping context.Canceled", err, domain.CodeUnavailable)
		}
	})

	t.Run("fails once closed", func(t *testing.T) {
		pub, _ := newPair(t, Prefix())
		c, ok := pub.(io.Closer)
		if !ok {
			t.Skip("publisher has no Close")
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		err := publishWithin(t, pub, 10*time.Second, newMessage(TypeVerify, 0))
		if !domain.IsCode(err, domain.CodeUnavailable) {
			t.Fatalf("Publish after Close = %v, want %s", err, domain.CodeUnavailable)
		}
	})
}

// RunUnreachableContract checks that a publisher pointed at a broker that
// does not answer (e.g. 127.0.0.1:1) fails within a bounded time, at
// construction or at Publish, with domain.CodeUnavailable, never hangs.
func RunUnreachableContract(t *testing.T, newUnreachable func(t *testing.T) (ports.Publisher, error)) {
	start := time.Now()
	pub, err := newUnreachable(t)
	if err != nil {
		if !domain.IsCode(err, domain.CodeUnavailable) {
			t.Fatalf("constructor error = %v, want %s", err, domain.CodeUnavailable)
		}
		t.Logf("unreachable broker reported at construction after %s: %v", time.Since(start), err)
		return
	}
	err = publishWithin(t, pub, 10*time.Second, newMessage(TypeVerify, 0))
	if !domain.IsCode(err, domain.CodeUnavailable) {
		t.Fatalf("Publish to an unreachable broker = %v, want %s", err, domain.CodeUnavailable)
	}
	if !errors.Is(err, ports.ErrBrokerUnreachable) {
		// Else the Dispatcher takes the outage for this event's fault and
		// spends its attempts.
		t.Fatalf("Publish to an unreachable broker = %v, want it to wrap ports.ErrBrokerUnreachable", err)
	}
	if domain.SanitizeError(err) != err.Error() {
		t.Logf("note: error text is sanitized when stored: %q", domain.SanitizeError(err))
	}
	t.Logf("unreachable broker reported by Publish after %s: %v", time.Since(start), err)
}

func publish(t *testing.T, pub ports.Publisher, msgs ...ports.Message) {
	t.Helper()
	if err := publishWithin(t, pub, wait, msgs...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
}

// publishWithin publishes with a deadline and fails the test if Publish
// outlives it by more than a second: Publish must honour its context.
func publishWithin(t *testing.T, pub ports.Publisher, d time.Duration, msgs ...ports.Message) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- pub.Publish(ctx, msgs...) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d + time.Second):
		t.Fatalf("Publish did not return within %s", d+time.Second)
		return nil
	}
}
