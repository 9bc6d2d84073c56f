package model_test

import "github.com/oncehq/once/domain/model"

// The material transfer job's payload, as workers read it (TestJobPayloadWireFormat).
func init() {
	payloadCases[model.EventMaterialTransfer] = payloadCase{
		model.MaterialTransferRun{TransferID: payloadTask, JobOperation: payloadOperation},
		`{"transfer_id":"00000000-0000-0000-0000-00000000000a",` + payloadOperationJSON + `}`,
	}
}
