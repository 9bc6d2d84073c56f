package queue

import (
	"context"

	"github.com/oncehq/once/ports"
)

// ByType is a ports.Publisher that hands the messages of some event types
// to publishers of their own and every other message to a default one:
// with ONCE_QUEUE=bullmq, the jobs only once can run (webhook.deliver:
// they need its sealed secrets and guarded client) go to Redis Streams for
// its own workers, the rest to BullMQ for the Node.js ones.
//
// A batch is split into one Publish per publisher, in the order of each
// publisher's first message, each message keeping its place among its
// publisher's. It stops at the first error and returns it as is: the
// publishers before it may have accepted theirs, which the port allows
// (delivery is at-least-once, consumers deduplicate by id), and the error
// keeps saying whether it was the broker's (ports.BrokersFault).
type ByType struct {
	other ports.Publisher
	types map[string]ports.Publisher
}

var _ ports.Publisher = (*ByType)(nil)

// NewByType routes the messages of each event type in types to its
// publisher, and all others to other.
func NewByType(other ports.Publisher, types map[string]ports.Publisher) *ByType {
	return &ByType{other: other, types: types}
}

// Publish implements ports.Publisher.
func (p *ByType) Publish(ctx context.Context, msgs ...ports.Message) error {
	// Groups are keyed by the routed event type, "" for the default
	// publisher: publishers need not be comparable.
	var order []string
	groups := map[string][]ports.Message{}
	for _, m := range msgs {
		key := ""
		if _, routed := p.types[m.Type]; routed {
			key = m.Type
		}
		if _, seen := groups[key]; !seen {
			order = append(order, key)
		}
		groups[key] = append(groups[key], m)
	}
	for _, key := range order {
		pub := p.other
		if key != "" {
			pub = p.types[key]
		}
		if err := pub.Publish(ctx, groups[key]...); err != nil {
			return err
		}
	}
	return nil
}
