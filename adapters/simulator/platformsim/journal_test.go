package platformsim_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type journal struct {
	effects []platformsim.Effect
	err     error
}

func (j *journal) Record(e platformsim.Effect) error {
	if j.err != nil {
		return j.err
	}
	j.effects = append(j.effects, e)
	return nil
}

// Every effect is journaled once, without credentials, and a new Sim
// restored from the journal answers the tokens as the first one did.
func TestSimJournalAndRestore(t *testing.T) {
	j := &journal{}
	first := platformsim.New(platformsim.WithJournal(j))
	verify := ports.VerifyCredentialsRequest{RequestToken: "op-1", Platform: "shopify", ExternalShopID: "shop-1",
		Credentials: model.StoreCredentials{APIKey: platformsim.InvalidAPIKey, APISecret: "sk_secret"}}
	verdict, err := first.VerifyCredentials(context.Background(), verify)
	require.NoError(t, err)
	listed, err := first.CreateListing(context.Background(), listing("pub-1", "Mug"))
	require.NoError(t, err)
	_, err = first.CreateListing(context.Background(), listing("pub-1", "Mug"))
	require.NoError(t, err)
	require.Len(t, j.effects, 2, "a replay journals nothing")
	raw, err := json.Marshal(j.effects)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "sk_secret")
	assert.NotContains(t, string(raw), `"`+platformsim.InvalidAPIKey+`"`)

	restored := platformsim.New()
	require.NoError(t, restored.Restore(j.effects))
	again, err := restored.VerifyCredentials(context.Background(), verify)
	require.NoError(t, err)
	assert.Equal(t, verdict, again)
	relisted, err := restored.CreateListing(context.Background(), listing("pub-1", "Mug"))
	require.NoError(t, err)
	assert.Equal(t, listed, relisted)
	next, err := restored.CreateListing(context.Background(), listing("pub-2", "Mug"))
	require.NoError(t, err)
	assert.Equal(t, "lst_000002", next.ExternalListingID)
	assert.Equal(t, 3, restored.EffectCount())

	assert.Error(t, platformsim.New().Restore([]platformsim.Effect{{Kind: platformsim.CallCreateListing, Token: "t"}}))
	assert.Error(t, platformsim.New().Restore([]platformsim.Effect{{Kind: "teleport", Token: "t"}}))
}

// A journal that cannot record leaves the token unexecuted.
func TestSimJournalFailureIsTransientAndActsNot(t *testing.T) {
	j := &journal{err: errors.New("disk full")}
	sim := platformsim.New(platformsim.WithJournal(j))
	_, err := sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	assert.Zero(t, sim.ListingCount())
	j.err = nil
	_, err = sim.CreateListing(context.Background(), listing("pub-1", "Mug"))
	require.NoError(t, err)
	assert.Equal(t, 1, sim.ListingCount())
}
