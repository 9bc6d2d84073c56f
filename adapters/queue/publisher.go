package queue

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Publisher is ports.Publisher over any watermill publisher.
//
// Messages are grouped by topic and each group goes to the broker in one
// Publish call, in the order of first appearance. Publish returns once the
// watermill publisher returned for every group, which the broker
// sub-packages configure to mean "accepted" (Redis: XADD answered; AMQP:
// publisher confirm received).
//
// The broker call runs on the caller's goroutine, bounded by ctx, which
// every message carries: the broker sub-packages end their calls with it
// (Redis: go-redis with ContextTimeoutEnabled sets the socket deadlines
// from it; AMQP: the connection is cut when it ends; GoChannel never
// blocks). So a publish that times out leaves no goroutine and no
// connection behind, however long the broker hangs.
type Publisher struct {
	pub       message.Publisher
	namespace string
}

var _ ports.Publisher = (*Publisher)(nil)

// NewPublisher wraps pub, prefixing every topic with namespace (e.g.
// "once."; "" for none). The Publisher owns pub: Close closes it.
func NewPublisher(pub message.Publisher, namespace string) *Publisher {
	return &Publisher{pub: pub, namespace: namespace}
}

// Publish implements ports.Publisher. Errors are domain.CodeValidation for
// a message that cannot be published (no id, no type: nothing is sent) and
// domain.CodeUnavailable, with a sanitized message, when the broker did not
// accept; some earlier groups may have been accepted by then. The latter
// wrap ports.ErrBrokerUnreachable when BrokerUnreachable says the failure
// was the broker's, unless the broker sub-package already said it was
// (ports.ErrBrokerUnreachable or ports.ErrBrokerMisconfigured).
func (p *Publisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	topics := make([]string, 0, 2)
	groups := make(map[string][]*message.Message, 2)
	for _, m := range msgs {
		if m.ID == uuid.Nil || m.Type == "" {
			return domain.Errorf(domain.CodeValidation, "queue: message %s has no id or no event type", m.ID)
		}
		topic := Topic(p.namespace, m.Type)
		if _, ok := groups[topic]; !ok {
			topics = append(topics, topic)
		}
		wm := ToMessage(m)
		wm.SetContext(ctx) // redis and amqp use it for the network call
		groups[topic] = append(groups[topic], wm)
	}
	for _, topic := range topics {
		if err := p.publish(ctx, topic, groups[topic]); err != nil {
			if BrokerUnreachable(err) && !ports.BrokersFault(err) {
				err = fmt.Errorf("%w: %w", ports.ErrBrokerUnreachable, err)
			}
			return unavailable(fmt.Sprintf("queue: publish %d message(s) to %s", len(groups[topic]), topic), err)
		}
	}
	return nil
}

// publish runs one broker call, bounded by ctx through the messages (see
// Publisher).
func (p *Publisher) publish(ctx context.Context, topic string, msgs []*message.Message) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	return p.pub.Publish(topic, msgs...)
}

// Close closes the underlying watermill publisher.
func (p *Publisher) Close() error { return p.pub.Close() }

// unavailable wraps a broker failure: its cause is sanitized, and said once,
// because callers store it (outbox last_error) and show it to operators.
func unavailable(what string, err error) error {
	return domain.Wrap(domain.CodeUnavailable, Sanitized(err), what)
}
