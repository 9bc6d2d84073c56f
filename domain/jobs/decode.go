package jobs

import (
	"bytes"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Decode reads the payload of a job message of eventType into a T. A
// message that can never succeed is CodeValidation, which the worker gives
// up on at once: another event type, no workspace, a payload that does
// not decode (unknown fields included), or one whose ids complete says are
// missing.
func Decode[T any](msg ports.Message, eventType string, complete func(T) bool) (T, error) {
	var job T
	if msg.Type != eventType {
		return job, domain.Errorf(domain.CodeValidation, "message type %q is not %s", msg.Type, eventType)
	}
	if msg.WorkspaceID == uuid.Nil {
		return job, domain.Errorf(domain.CodeValidation, "message %s has no workspace", msg.ID)
	}
	dec := json.NewDecoder(bytes.NewReader(msg.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		return job, domain.Wrap(domain.CodeValidation, err, eventType+" payload cannot be decoded")
	}
	if !complete(job) {
		return job, domain.Errorf(domain.CodeValidation, "%s payload lacks an id it needs", eventType)
	}
	return job, nil
}
