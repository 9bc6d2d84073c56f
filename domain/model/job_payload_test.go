package model

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJobPayloadWireFormat pins the JSON of every job payload: workers
// (the Node.js BullMQ ones included) and events already in the outbox read
// these exact names, so embedding JobOperation must not change a byte.
func TestJobPayloadWireFormat(t *testing.T) {
	task := uuid.MustParse("00000000-0000-0000-0000-00000000000a")
	op := JobOperation{OperationID: uuid.MustParse("00000000-0000-0000-0000-00000000000b")}
	const opJSON = `"operation_id":"00000000-0000-0000-0000-00000000000b"`
	for _, c := range []struct {
		payload interface{ Task() uuid.UUID }
		want    string
	}{
		{AITaskRun{TaskID: task, JobOperation: op}, `{"task_id":"00000000-0000-0000-0000-00000000000a",` + opJSON + `}`},
		{ListingPublish{PublicationID: task, ProductRevision: 3, JobOperation: op},
			`{"publication_id":"00000000-0000-0000-0000-00000000000a","product_revision":3,` + opJSON + `}`},
		{CatalogSyncRun{SyncID: task, JobOperation: op}, `{"sync_id":"00000000-0000-0000-0000-00000000000a",` + opJSON + `}`},
		{MaterialTransferRun{TransferID: task, JobOperation: op}, `{"transfer_id":"00000000-0000-0000-0000-00000000000a",` + opJSON + `}`},
		{MediaProcess{MediaID: task, JobOperation: op}, `{"media_id":"00000000-0000-0000-0000-00000000000a",` + opJSON + `}`},
		{StoreCredentialsVerify{StoreID: task, CredentialVersion: 2, JobOperation: op},
			`{"store_id":"00000000-0000-0000-0000-00000000000a","credential_version":2,` + opJSON + `}`},
	} {
		raw, err := json.Marshal(c.payload)
		require.NoError(t, err)
		assert.Equal(t, c.want, string(raw))
		assert.Equal(t, task, c.payload.Task())
		got, ok := JobOperationID(raw)
		assert.True(t, ok)
		assert.Equal(t, op.OperationID, got)
	}
}
