package dispatch

import (
	"time"

	"github.com/oncehq/once/domain/model"
)

// Observer hears what the Dispatcher did, for metrics. Calls come from the
// goroutines of the batches in flight, several at once (Config.Concurrency),
// and must return quickly.
type Observer interface {
	// Published reports events the broker accepted at `at` (at minus
	// CreatedAt is the delivery latency).
	Published(events []model.OutboxEvent, at time.Time)
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
	// Round reports one claim–publish–mark round of one workspace batch,
	// once it is settled; a claim that found nothing is not reported.
	Round(r RoundStats)
	// Discovered reports one discovery of the workspaces with due events
	// (every round asks, whether or not it finds any): how long it took
	// and how many it found. With the relay delivering every event it is
	// the Dispatcher's only reading of the queue's index.
	Discovered(took time.Duration, workspaces int)
}

// RoundStats describes one claimed batch's trip through the Dispatcher.
type RoundStats struct {
	// Claimed is the number of events the claim returned (the batch size).
	Claimed int
	// Claim is how long the claim statement took.
	Claim time.Duration
	// Publish is how long the broker took to accept the batch.
	Publish time.Duration
	// Total is the whole round, claim to mark.
	Total time.Duration
}

// NopObserver observes nothing.
type NopObserver struct{}

var _ Observer = NopObserver{}

func (NopObserver) Published([]model.OutboxEvent, time.Time) {}
func (NopObserver) PublishFailed(int)                        {}
func (NopObserver) DeadLettered(int)                         {}
func (NopObserver) BrokerUp(bool)                            {}
func (NopObserver) Round(RoundStats)                         {}
func (NopObserver) Discovered(time.Duration, int)            {}
