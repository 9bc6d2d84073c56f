package model_test

import "github.com/oncehq/once/domain/model"

// The store verification job's payload, as workers read it (TestJobPayloadWireFormat).
func init() {
	payloadCases[model.EventStoreCredentialsVerify] = payloadCase{
		model.StoreCredentialsVerify{StoreID: payloadTask, CredentialVersion: 2, JobOperation: payloadOperation},
		`{"store_id":"00000000-0000-0000-0000-00000000000a","credential_version":2,` + payloadOperationJSON + `}`,
	}
}
