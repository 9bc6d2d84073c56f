package queuetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
)

// RunMisconfiguredContract checks a publisher whose broker answers but is
// not set up the way it was told (a Redis Cluster node reached through a
// single-node URL, a RabbitMQ queue that exists with other arguments): a
// publish of TypeVerify fails with domain.CodeUnavailable
// wrapping ports.ErrBrokerMisconfigured, and its text holds says (the
// broker's answer, e.g. "MOVED"). Then a Dispatcher publishes events
// through it for a while: none spends an attempt or is dead-lettered, the
// Dispatcher reports the broker down and Paused says why, with says in it.
func RunMisconfiguredContract(t *testing.T, pub ports.Publisher, says string) {
	err := publishWithin(t, pub, wait, newMessage(TypeVerify, 0))
	if !domain.IsCode(err, domain.CodeUnavailable) || !errors.Is(err, ports.ErrBrokerMisconfigured) {
		t.Fatalf("publish to a misconfigured broker = %v, want %s wrapping %v", err, domain.CodeUnavailable, ports.ErrBrokerMisconfigured)
	}
	if !strings.Contains(err.Error(), says) {
		t.Fatalf("publish to a misconfigured broker = %v, want it to say %q", err, says)
	}
	t.Logf("publish: %s", domain.SanitizeError(err))

	counting := &countingPublisher{next: pub}
	env := startDispatcher(t, counting)
	for range 3 {
		env.write(uuid.New(), 4)
	}
	env.eventually("the broker reported down, probed a few times, every event tried", func() bool {
		if env.d.Paused() == nil || counting.failures.Load() < int32(dispatch.DefaultBreakerFailures+3) {
			return false
		}
		for _, ev := range env.all() {
			if ev.LastError == "" {
				return false
			}
		}
		return true
	})
	env.noAttemptSpent("while the broker is misconfigured")
	for _, ev := range env.all() {
		if !strings.Contains(ev.LastError, says) {
			t.Errorf("event %s: last error %q, want the reason (%q)", ev.ID, ev.LastError, says)
		}
	}
	paused := env.d.Paused()
	if paused == nil || !strings.Contains(paused.Error(), "the broker is misconfigured") || !strings.Contains(paused.Error(), says) {
		t.Fatalf("Paused() = %v, want it to say the broker is misconfigured and %q", paused, says)
	}
	t.Logf("Paused: %v", paused)
}
