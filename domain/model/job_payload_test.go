package model_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
)

// payloadCase is a kind's job payload for the task payloadTask and the
// operation payloadOperation, and the JSON it must marshal to.
type payloadCase struct {
	payload interface{ Task() uuid.UUID }
	want    string
}

var (
	payloadTask      = uuid.MustParse("00000000-0000-0000-0000-00000000000a")
	payloadOperation = model.JobOperation{OperationID: uuid.MustParse("00000000-0000-0000-0000-00000000000b")}
)

const payloadOperationJSON = `"operation_id":"00000000-0000-0000-0000-00000000000b"`

// payloadCases are each kind's case by event type, added by the kind's own
// test file (<kind>_test.go).
var payloadCases = map[string]payloadCase{}

// TestJobPayloadWireFormat pins the JSON of every job payload: workers
// (the Node.js BullMQ ones included) and events already in the outbox read
// these exact names, so embedding JobOperation must not change a byte.
func TestJobPayloadWireFormat(t *testing.T) {
	for _, k := range kinds.All {
		c, ok := payloadCases[k.EventType]
		if !assert.True(t, ok, "task kind %s has no payload case in its test file", k.EventType) {
			continue
		}
		raw, err := json.Marshal(c.payload)
		require.NoError(t, err)
		assert.Equal(t, c.want, string(raw))
		assert.Equal(t, payloadTask, c.payload.Task())
		got, ok := model.JobOperationID(raw)
		assert.True(t, ok)
		assert.Equal(t, payloadOperation.OperationID, got)
	}
	assert.Len(t, payloadCases, len(kinds.All), "a case per kind, none for an undeclared one")
}
