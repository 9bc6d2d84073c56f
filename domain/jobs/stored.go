package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Stored is the outbox event msg delivers, read in tx (a transaction of
// msg's workspace). A message on the broker is only a pointer: whoever can
// write to Redis or RabbitMQ can put one there, naming any workspace,
// operation or webhook endpoint. So a message is trusted only as far as
// the outbox agrees: an event of its workspace with its id and type, whose
// payload is the message's (as JSON values: PostgreSQL keeps payloads as
// jsonb, which may reorder keys). Anything else is domain.CodeNotFound: a
// forged message, or one whose event retention has deleted.
func Stored(ctx context.Context, tx ports.Tx, msg ports.Message) (model.OutboxEvent, error) {
	event, err := tx.Outbox().Get(ctx, msg.ID)
	if err != nil {
		return event, err
	}
	if event.Type != msg.Type || !sameJSON(event.Payload, msg.Payload) {
		return model.OutboxEvent{}, domain.Errorf(domain.CodeNotFound, "message %s is not the outbox event of its id", msg.ID)
	}
	return event, nil
}

// sameJSON says whether a and b are the same JSON value. The Dispatcher
// publishes a payload as PostgreSQL returns it, so a job's message mostly
// holds the very bytes its event is read back with: those need no
// decoding (it was 2 % of the worker's CPU).
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return json.Valid(a)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
