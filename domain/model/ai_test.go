package model_test

import "github.com/oncehq/once/domain/model"

// The AI task job's payload, as workers read it (TestJobPayloadWireFormat).
func init() {
	payloadCases[model.EventAITask] = payloadCase{
		model.AITaskRun{TaskID: payloadTask, JobOperation: payloadOperation},
		`{"task_id":"00000000-0000-0000-0000-00000000000a",` + payloadOperationJSON + `}`,
	}
}
