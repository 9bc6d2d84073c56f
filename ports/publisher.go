package ports

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// Message is one outbox event on its way to a queue. ID is the outbox event
// id and becomes the broker's message id, so consumers can deduplicate.
type Message struct {
	ID          uuid.UUID
	Type        string
	WorkspaceID uuid.UUID
	Payload     []byte
	// Traceparent is the W3C trace context of the request that wrote the
	// event, when there was one.
	Traceparent string

	// Destination is where the job's external call goes
	// (model.Destination's String: "shopify/shop-123", "ai/default"); the
	// worker paces, throttles and breaks calls per destination. Empty: the
	// job calls nothing outside.
	Destination string
	// OrderingKey: jobs with the same key never run at once and run in
	// commit order (a store's catalog syncs). Empty: no order.
	OrderingKey string
	// Attempts is how many of the job's runs failed by its own fault so
	// far (the event's job_attempts); waits for its destination count
	// none.
	Attempts int
	// CreatedAt is when the event was committed: a job keeps trying
	// transient failures until CreatedAt plus its kind's deadline.
	CreatedAt time.Time
	// WaitKind and WaitedFor are, for a job a worker parked
	// (JobWaits.Defer), why and for which destination it waited: a job
	// that waited for a destination that was down and then reaches it
	// tells, through them, that its workspace's jobs asleep for it may
	// wake, whatever worker parked them. Empty for a job nobody parked.
	WaitKind  model.JobWaitKind
	WaitedFor string
}

// Publisher hands messages to a queue.
type Publisher interface {
	// Publish returns nil only once the broker has accepted every message
	// (for AMQP: confirmed). On error some messages may have been accepted:
	// delivery is at-least-once and consumers deduplicate by ID. An error
	// that wraps ErrBrokerUnreachable or ErrBrokerMisconfigured says
	// nothing about the messages; any other error may be theirs. Publish
	// returns by the end of ctx and leaves no broker call running behind
	// it.
	Publish(ctx context.Context, msgs ...Message) error
}

// ErrBrokerUnreachable is wrapped by Publish errors that are about the
// broker, not the messages: it could not be reached, dropped the
// connection, did not answer in time, or cannot accept anything right now.
// Every publish fails that way until it is back, so the Dispatcher backs
// off as a whole and counts no attempt against the events.
var ErrBrokerUnreachable = errors.New("broker unreachable")

// ErrBrokerMisconfigured is wrapped by Publish errors that say the broker
// answered, but is not set up the way once was told: a Redis Cluster node
// reached through a single-node URL (MOVED, ASK), keys of one BullMQ queue
// spread over hash slots (CROSSSLOT), a RabbitMQ queue that exists with
// other arguments (PRECONDITION_FAILED), refused credentials or
// permissions. Like an unreachable broker it fails every publish until an
// operator fixes it, so the Dispatcher backs off as a whole, counts no
// attempt, and says why.
var ErrBrokerMisconfigured = errors.New("broker misconfigured")

// BrokersFault reports whether a Publish error is the broker's rather than
// the messages': it wraps ErrBrokerUnreachable or ErrBrokerMisconfigured.
func BrokersFault(err error) bool {
	return errors.Is(err, ErrBrokerUnreachable) || errors.Is(err, ErrBrokerMisconfigured)
}
