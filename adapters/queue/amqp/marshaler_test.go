package amqp

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
)

func TestMarshalerSetsMessageID(t *testing.T) {
	msg := message.NewMessage("0b7e4c8e-1f7e-4a8e-9d7e-3c1f4b2a6d5e", []byte(`{}`))
	msg.Metadata.Set(queue.MetadataEventType, "store.credentials.verify")
	p, err := Marshaler{}.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if p.MessageId != msg.UUID || p.DeliveryMode != amqp091.Persistent || p.Type != "store.credentials.verify" || p.Headers[uuidHeader] != msg.UUID {
		t.Errorf("publishing = %+v", p)
	}
}

func TestUnmarshalerPrefersMessageIDAndSkipsForeignHeaders(t *testing.T) {
	d := amqp091.Delivery{
		MessageId: "0b7e4c8e-1f7e-4a8e-9d7e-3c1f4b2a6d5e",
		Headers: amqp091.Table{
			uuidHeader:                "something-else",
			queue.MetadataEventType:   "store.credentials.verify",
			"x-death":                 []any{amqp091.Table{"count": int64(1)}},
			queue.MetadataTraceparent: "00-abc-def-01",
		},
		Body: []byte(`{}`),
	}
	msg, err := Marshaler{}.Unmarshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if msg.UUID != d.MessageId {
		t.Errorf("UUID = %q, want the message-id", msg.UUID)
	}
	if msg.Metadata.Get(queue.MetadataEventType) != "store.credentials.verify" || msg.Metadata.Get(queue.MetadataTraceparent) != "00-abc-def-01" {
		t.Errorf("metadata = %v", msg.Metadata)
	}
	if _, ok := msg.Metadata["x-death"]; ok {
		t.Error("non-string header copied")
	}

	d.MessageId = ""
	if msg, _ := (Marshaler{}).Unmarshal(d); msg.UUID != "something-else" {
		t.Errorf("fallback UUID = %q, want the watermill header", msg.UUID)
	}
}
