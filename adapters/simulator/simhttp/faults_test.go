package simhttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// Faults apply to the calls of their kind, as many times as asked, in the
// order they were added.
func TestSimFaultsPerKindAndCount(t *testing.T) {
	ctx := context.Background()
	s := startSim(t, "")
	c := s.client(t, 5*time.Second)
	s.inject(t, simhttp.Fault{Kind: simhttp.KindGenerate, Action: simhttp.ActionReject, Times: 2})
	s.inject(t, simhttp.Fault{Kind: simhttp.KindGenerate, Action: simhttp.ActionFail})

	_, err := c.CreateListing(ctx, listing("pub-1", "Mug"))
	require.NoError(t, err, "a platform call is not an AI call")
	for range 2 {
		_, err = c.Generate(ctx, ports.AIRequest{RequestToken: "ai-1", Kind: model.AIText, Title: "Mug"})
		assert.True(t, domain.IsCode(err, domain.CodeValidation), "rejected: %v", err)
		assert.False(t, platformerr.Retryable(ctx, err), "a rejection is permanent")
	}
	_, err = c.Generate(ctx, ports.AIRequest{RequestToken: "ai-1", Kind: model.AIText, Title: "Mug"})
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "then the outage: %v", err)
	assert.Zero(t, s.effects(t, "ai-1"), "no fault before acting charges")
	_, err = c.Generate(ctx, ports.AIRequest{RequestToken: "ai-1", Kind: model.AIText, Title: "Mug"})
	require.NoError(t, err, "the faults are used up")
	assert.Equal(t, 1, s.effects(t, "ai-1"))

	s.inject(t, simhttp.Fault{Action: simhttp.ActionFail, Times: 5})
	require.NoError(t, s.admin.ClearFaults(ctx))
	_, err = c.CreateListing(ctx, listing("pub-2", "Mug"))
	assert.NoError(t, err, "cleared")

	s.inject(t, simhttp.Fault{Kind: simhttp.KindListing, Action: simhttp.ActionDelay, DelayMS: 1})
	_, err = c.CreateListing(ctx, listing("pub-3", "Mug"))
	assert.NoError(t, err, "a delay only delays")

	logs := s.logs.String()
	assert.Contains(t, logs, `"fault":"reject"`)
	assert.NotContains(t, logs, shopCreds.APISecret)
	assert.NotContains(t, logs, shopCreds.APIKey)
}

// hold_after: the system acted (the ledger has the effect) and the answer
// waits until released.
func TestSimHoldAfterActing(t *testing.T) {
	s := startSim(t, "")
	s.inject(t, simhttp.Fault{Kind: simhttp.KindVerify, Action: simhttp.ActionHoldAfter})
	c := s.client(t, time.Minute)
	done := make(chan error, 1)
	go func() {
		_, err := c.VerifyCredentials(context.Background(), ports.VerifyCredentialsRequest{
			RequestToken: "op-1", Platform: "shopify", ExternalShopID: "shop-1", Credentials: shopCreds,
		})
		done <- err
	}()
	held := s.waitHeld(t, 1)
	assert.True(t, held[0].After)
	assert.Equal(t, 1, s.effects(t, "op-1"), "the platform acted before the hold")
	select {
	case err := <-done:
		t.Fatalf("answered while held: %v", err)
	default:
	}
	_, err := s.admin.Release(context.Background())
	require.NoError(t, err)
	require.NoError(t, <-done)
	assert.Empty(t, s.waitHeld(t, 0))
}

func TestSimAdminRefusesABadFault(t *testing.T) {
	s := startSim(t, "")
	for _, f := range []simhttp.Fault{
		{Action: "explode"},
		{Action: simhttp.ActionDelay},
		{Kind: "platform.everything", Action: simhttp.ActionFail},
		{Action: simhttp.ActionFail, Times: -1},
	} {
		err := s.admin.Inject(context.Background(), f)
		assert.ErrorContains(t, err, "422", "%+v", f)
	}
	res, err := http.Post(s.http.URL+simhttp.PathFaults, "application/json", strings.NewReader("{"))
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
}
