package model

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The jobs a request starts get tokens derived from its origin: the same
// in every execution of the request, another for each job it starts
// (another event type, or a second job of one type), and none outside a
// request.
func TestJobTokensDeriveFromTheRequestOrigin(t *testing.T) {
	origin := uuid.New()
	tokens := func(ctx context.Context) []string {
		return []string{
			jobToken(ctx, EventStoreCredentialsVerify), jobToken(ctx, EventListingPublish), jobToken(ctx, EventStoreCredentialsVerify),
		}
	}
	first := tokens(WithRequestOrigin(context.Background(), origin))
	again := tokens(WithRequestOrigin(context.Background(), origin))
	assert.Equal(t, first, again, "another execution of the request: the same tokens")
	assert.Len(t, map[string]bool{first[0]: true, first[1]: true, first[2]: true}, 3, "one token per job")
	other := tokens(WithRequestOrigin(context.Background(), uuid.New()))
	assert.NotEqual(t, first[0], other[0])
	assert.Empty(t, jobToken(context.Background(), EventStoreCredentialsVerify))
}

// NewJob writes the token into the payload, which keeps its wire format
// otherwise (request_token next to operation_id, only when there is one),
// and TokenOr falls back to the given id without one.
func TestNewJobCarriesTheRequestToken(t *testing.T) {
	opID, eventID, resource := uuid.New(), uuid.New(), uuid.New()
	ids := seqIDs{opID, eventID}
	origin := uuid.New()
	_, event, err := NewJob(WithRequestOrigin(context.Background(), origin), &ids, Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}, time.Now(), JobSpec{
		OperationKind: OperationStoreVerify, ResourceType: "store", ResourceID: resource, EventType: EventStoreCredentialsVerify,
		Payload: func(op JobOperation) any {
			return StoreCredentialsVerify{StoreID: resource, CredentialVersion: 1, JobOperation: op}
		},
	})
	require.NoError(t, err)
	var job StoreCredentialsVerify
	require.NoError(t, json.Unmarshal(event.Payload, &job))
	first := jobToken(WithRequestOrigin(context.Background(), origin), EventStoreCredentialsVerify)
	assert.Equal(t, first, job.TokenOr(opID), "the first job of its type")
	assert.Contains(t, string(event.Payload), `"request_token":"`+job.RequestToken+`"`)

	assert.Equal(t, opID.String(), JobOperation{OperationID: opID}.TokenOr(opID))
}
