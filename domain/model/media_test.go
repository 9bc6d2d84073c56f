package model_test

import "github.com/oncehq/once/domain/model"

// The media processing job's payload, as workers read it (TestJobPayloadWireFormat).
func init() {
	payloadCases[model.EventMediaProcess] = payloadCase{
		model.MediaProcess{MediaID: payloadTask, JobOperation: payloadOperation},
		`{"media_id":"00000000-0000-0000-0000-00000000000a",` + payloadOperationJSON + `}`,
	}
}
