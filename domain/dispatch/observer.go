package dispatch

import (
	"time"

	"github.com/oncehq/once/domain"
)

// Observer hears what the Dispatcher did, for metrics. Calls are made on the
// dispatching goroutine and must return quickly.
type Observer interface {
	// Published reports events the broker accepted at `at` (at minus
	// CreatedAt is the delivery latency).
	Published(events []domain.OutboxEvent, at time.Time)
	// PublishFailed reports n events whose publish failed and that were
	// released for a later attempt.
	PublishFailed(n int)
	// DeadLettered reports n events parked after their last attempt.
	DeadLettered(n int)
	// BrokerUp reports the Dispatcher's view of the broker when it
	// changes: false when publishing stopped because the broker is
	// unreachable (the breaker opened), true when it resumed. A Dispatcher
	// starts up.
	BrokerUp(up bool)
}

// NopObserver observes nothing.
type NopObserver struct{}

var _ Observer = NopObserver{}

func (NopObserver) Published([]domain.OutboxEvent, time.Time) {}
func (NopObserver) PublishFailed(int)                         {}
func (NopObserver) DeadLettered(int)                          {}
func (NopObserver) BrokerUp(bool)                             {}
