package model_test

import "github.com/oncehq/once/domain/model"

// The listing publication job's payload, as workers read it (TestJobPayloadWireFormat).
func init() {
	payloadCases[model.EventListingPublish] = payloadCase{
		model.ListingPublish{PublicationID: payloadTask, ProductRevision: 3, JobOperation: payloadOperation},
		`{"publication_id":"00000000-0000-0000-0000-00000000000a","product_revision":3,` + payloadOperationJSON + `}`,
	}
}
