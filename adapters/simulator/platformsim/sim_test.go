package platformsim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func request(token, key string) ports.VerifyCredentialsRequest {
	return ports.VerifyCredentialsRequest{
		RequestToken: token, Platform: "shopify", ExternalShopID: "shop-1",
		Credentials: model.StoreCredentials{APIKey: key, APISecret: "sk_secret"},
	}
}

// A token is executed once; repeating it returns the first outcome and does
// nothing, even when many callers race.
func TestATokenHasOneEffectHoweverOftenItIsCalled(t *testing.T) {
	sim := platformsim.New()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			res, err := sim.VerifyCredentials(context.Background(), request("tok-1", "ak"))
			assert.NoError(t, err)
			assert.True(t, res.Valid)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, sim.Effects("tok-1"))
	assert.Equal(t, 1, sim.EffectCount())
	calls := sim.Calls()
	require.Len(t, calls, 50)
	effects := 0
	for _, c := range calls {
		if c.Effect {
			effects++
		} else {
			assert.True(t, c.Replayed)
		}
	}
	assert.Equal(t, 1, effects)

	_, err := sim.VerifyCredentials(context.Background(), request("tok-2", "ak"))
	require.NoError(t, err)
	assert.Equal(t, 2, sim.EffectCount())
}

func TestRejectedKeyIsAResultThatDoesNotEchoTheKey(t *testing.T) {
	sim := platformsim.New()
	res, err := sim.VerifyCredentials(context.Background(), request("tok", platformsim.InvalidAPIKey))
	require.NoError(t, err)
	assert.False(t, res.Valid)
	assert.NotEmpty(t, res.Reason)
	assert.NotContains(t, res.Reason, platformsim.InvalidAPIKey)
	assert.NotContains(t, res.Reason, "sk_secret")

	c := sim.Calls()[0]
	assert.Equal(t, platformsim.KeyHash(platformsim.InvalidAPIKey), c.KeyHash)
	assert.NotContains(t, c.KeyHash, platformsim.InvalidAPIKey)
}

func TestFailNextFailsBeforeTheEffect(t *testing.T) {
	sim := platformsim.New()
	sim.FailNext(2, nil)
	for range 2 {
		_, err := sim.VerifyCredentials(context.Background(), request("tok", "ak"))
		assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "got %v", err)
	}
	assert.Equal(t, 0, sim.Effects("tok"))

	permanent := domain.Errorf(domain.CodeForbidden, "app not installed")
	sim.FailNext(1, permanent)
	_, err := sim.VerifyCredentials(context.Background(), request("tok", "ak"))
	assert.True(t, errors.Is(err, permanent))

	res, err := sim.VerifyCredentials(context.Background(), request("tok", "ak"))
	require.NoError(t, err)
	assert.True(t, res.Valid)
	assert.Equal(t, 1, sim.Effects("tok"))
	assert.Len(t, sim.Calls(), 4)
}

// The platform acted but the answer was lost: the retry with the same token
// gets the first outcome and causes no second effect.
func TestFailAfterEffectActsThenTimesOut(t *testing.T) {
	sim := platformsim.New()
	sim.FailAfterEffect(1)
	_, err := sim.VerifyCredentials(context.Background(), request("tok", "ak"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "got %v", err)
	assert.Equal(t, 1, sim.Effects("tok"))

	res, err := sim.VerifyCredentials(context.Background(), request("tok", "ak"))
	require.NoError(t, err)
	assert.True(t, res.Valid)
	assert.Equal(t, 1, sim.Effects("tok"))
	calls := sim.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[0].Effect)
	assert.Error(t, calls[0].Err)
	assert.True(t, calls[1].Replayed)
}

func TestATokenReusedForAnotherRequestIsAConflict(t *testing.T) {
	sim := platformsim.New()
	_, err := sim.VerifyCredentials(context.Background(), request("tok", "ak"))
	require.NoError(t, err)
	_, err = sim.VerifyCredentials(context.Background(), request("tok", "other-key"))
	assert.True(t, domain.IsCode(err, domain.CodeConflict), "got %v", err)
	assert.NotContains(t, err.Error(), "other-key")
	assert.Equal(t, 1, sim.EffectCount())
}

func TestBadRequestsAreRefusedWithoutEffect(t *testing.T) {
	sim := platformsim.New()
	_, err := sim.VerifyCredentials(context.Background(), request("", "ak"))
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
	req := request("tok", "ak")
	req.Platform = "myspace"
	_, err = sim.VerifyCredentials(context.Background(), req)
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
	assert.Equal(t, 0, sim.EffectCount())
}

func TestLatencyRespectsTheCallersContext(t *testing.T) {
	sim := platformsim.New(platformsim.WithLatency(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := sim.VerifyCredentials(ctx, request("tok", "ak"))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "got %v", err)
	assert.Equal(t, 0, sim.EffectCount())
	assert.Len(t, sim.Calls(), 1)
}

func TestWithRuleDecides(t *testing.T) {
	sim := platformsim.New(platformsim.WithRule(func(_, shop string, _ model.StoreCredentials) ports.VerifyCredentialsResult {
		return ports.VerifyCredentialsResult{Valid: shop == "good"}
	}))
	req := request("t1", "ak")
	req.ExternalShopID = "good"
	res, err := sim.VerifyCredentials(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, res.Valid)
	res, err = sim.VerifyCredentials(context.Background(), request("t2", "ak"))
	require.NoError(t, err)
	assert.False(t, res.Valid)
}
