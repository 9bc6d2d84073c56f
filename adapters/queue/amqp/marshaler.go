package amqp

import (
	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
)

// uuidHeader also carries the message id, as watermill's default marshaler
// does, so watermill consumers without this marshaler still read it.
const uuidHeader = wmamqp.DefaultMessageUUIDHeaderKey

// Marshaler maps watermill messages to AMQP. Unlike watermill's default
// one it sets the AMQP message-id property to the message UUID (the
// outbox event id), so any AMQP tool or consumer sees the event id where
// AMQP puts it, and the event type as the AMQP type. Messages are
// persistent. Headers that are not strings (x-death after a dead-letter,
// headers added by other producers) are skipped instead of failing, which
// would requeue the message forever.
type Marshaler struct{}

var _ wmamqp.Marshaler = Marshaler{}

// Marshal implements wmamqp.Marshaler.
func (Marshaler) Marshal(msg *message.Message) (amqp091.Publishing, error) {
	headers := make(amqp091.Table, len(msg.Metadata)+1)
	for k, v := range msg.Metadata {
		headers[k] = v
	}
	headers[uuidHeader] = msg.UUID
	return amqp091.Publishing{
		MessageId:    msg.UUID,
		Type:         msg.Metadata.Get(queue.MetadataEventType),
		DeliveryMode: amqp091.Persistent,
		Headers:      headers,
		Body:         msg.Payload,
	}, nil
}

// Unmarshal implements wmamqp.Marshaler. The id is the message-id
// property, or the watermill header for messages published without it. It
// never fails: an error here would nack and requeue the message forever,
// while a message without a usable id reaches the worker, which gives up on it.
func (Marshaler) Unmarshal(d amqp091.Delivery) (*message.Message, error) {
	id := d.MessageId
	if id == "" {
		id, _ = d.Headers[uuidHeader].(string)
	}
	msg := message.NewMessage(id, d.Body)
	for k, v := range d.Headers {
		if s, ok := v.(string); ok && k != uuidHeader {
			msg.Metadata.Set(k, s)
		}
	}
	return msg, nil
}
