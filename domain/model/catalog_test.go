package model_test

import "github.com/oncehq/once/domain/model"

// The catalog sync job's payload, as workers read it (TestJobPayloadWireFormat).
func init() {
	payloadCases[model.EventCatalogSync] = payloadCase{
		model.CatalogSyncRun{SyncID: payloadTask, JobOperation: payloadOperation},
		`{"sync_id":"00000000-0000-0000-0000-00000000000a",` + payloadOperationJSON + `}`,
	}
}
