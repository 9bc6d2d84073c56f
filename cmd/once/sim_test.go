package main

import (
	"context"
	"path/filepath"
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

// startSim runs `once sim` on addr and ledger and waits until it serves.
func startSim(t *testing.T, addr, ledger string) *process {
	t.Helper()
	p := startOnce(t, nil, "sim", "--addr", addr, "--ledger", ledger)
	waitHealthy(t, p, "http://"+addr+simhttp.PathHealth)
	return p
}

// `once sim` killed -9 while holding a call it already executed: the
// restarted simulator reloads its ledger and answers the retry with the
// first outcome; `once sim ledger` counts one effect per token.
func TestSimCommandSurvivesKill9(t *testing.T) {
	ctx := context.Background()
	addr, ledger := freeAddr(t), filepath.Join(t.TempDir(), "sim", "ledger.jsonl")
	url := "http://" + addr
	sim := startSim(t, addr, ledger)
	c, err := simhttp.NewClient(simhttp.ClientConfig{URL: url, Timeout: time.Minute})
	require.NoError(t, err)
	admin := simhttp.NewAdmin(url)
	creds := model.StoreCredentials{APIKey: "ak_cmd", APISecret: "sk_cmd_secret"}
	listing := func(token string) ports.CreateListingRequest {
		return ports.CreateListingRequest{RequestToken: token, Platform: "shopify", ExternalShopID: "shop-k",
			Credentials: creds, Title: "Mug", PriceMinor: 900, Currency: "EUR"}
	}

	first, err := c.CreateListing(ctx, listing("pub-1"))
	require.NoError(t, err)
	require.NoError(t, admin.Inject(ctx, simhttp.Fault{Kind: simhttp.KindListing, Action: simhttp.ActionHoldAfter}))
	answered := make(chan error, 1)
	go func() {
		_, err := c.CreateListing(ctx, listing("pub-2"))
		answered <- err
	}()
	require.Eventually(t, func() bool {
		held, err := admin.Held(ctx)
		return err == nil && len(held) == 1
	}, 30*time.Second, 10*time.Millisecond)
	sim.kill()
	err = <-answered
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "the caller never heard: %v", err)

	startSim(t, addr, ledger)
	again, err := c.CreateListing(ctx, listing("pub-1"))
	require.NoError(t, err)
	assert.Equal(t, first, again)
	second, err := c.CreateListing(ctx, listing("pub-2"))
	require.NoError(t, err)
	assert.Equal(t, "lst_000002", second.ExternalListingID, "executed before the kill, answered after it")

	for _, source := range [][]string{{"--url", url}, {"--file", ledger}} {
		out := runOnce(t, nil, append([]string{"sim", "ledger", "--count", "--kind", string(simhttp.KindListing)}, source...)...)
		assert.Equal(t, 2, atoi(t, strings.TrimSpace(out)), "%v", source)
		out = runOnce(t, nil, append([]string{"sim", "ledger", "--token", "pub-2"}, source...)...)
		assert.Equal(t, 1, strings.Count(out, "\n"), out)
		assert.Contains(t, out, `"token":"pub-2"`)
		assert.NotContains(t, out, creds.APISecret)
	}
}

func TestSimCommandStartupFailuresSayWhat(t *testing.T) {
	busy := freeAddr(t)
	startSim(t, busy, filepath.Join(t.TempDir(), "a.jsonl"))
	cmd := startOnce(t, nil, "sim", "--addr", busy, "--ledger", filepath.Join(t.TempDir(), "b.jsonl"))
	<-cmd.done
	assert.NotZero(t, cmd.cmd.ProcessState.ExitCode())
	assert.Contains(t, cmd.output.String(), "address already in use")

	out := startOnce(t, []string{"ONCE_SIM_URL="}, "sim", "ledger")
	<-out.done
	assert.NotZero(t, out.cmd.ProcessState.ExitCode())
	assert.Contains(t, out.output.String(), "--url")
}

// The platform flags reach the server: shopify's shop bucket of 2 answers
// the third call at once 429, amazon is down from the start, tiktok is
// untouched; a bad flag stops `once sim` with what is wrong.
func TestSimCommandPlatformFlags(t *testing.T) {
	ctx := context.Background()
	addr := freeAddr(t)
	p := startOnce(t, nil, "sim", "--addr", addr, "--ledger", filepath.Join(t.TempDir(), "ledger.jsonl"),
		"--shop-bucket", "shopify=2:0.001", "--outage", "amazon@0s", "--platform-latency", "tiktok=1ms")
	waitHealthy(t, p, "http://"+addr+simhttp.PathHealth)
	c, err := simhttp.NewClient(simhttp.ClientConfig{URL: "http://" + addr, Timeout: time.Minute})
	require.NoError(t, err)
	create := func(token, platform string) error {
		_, err := c.CreateListing(ctx, ports.CreateListingRequest{RequestToken: token, Platform: platform, ExternalShopID: "s",
			Credentials: model.StoreCredentials{APIKey: "ak", APISecret: "sk"}, Title: "Mug", PriceMinor: 900, Currency: "EUR"})
		return err
	}
	require.NoError(t, create("a", "shopify"))
	require.NoError(t, create("b", "shopify"))
	_, throttled := platformerr.ThrottledFor(create("c", "shopify"))
	assert.True(t, throttled)
	err = create("d", "amazon")
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	require.NoError(t, create("e", "tiktok"))

	bad := startOnce(t, nil, "sim", "--addr", freeAddr(t), "--ledger", filepath.Join(t.TempDir(), "b.jsonl"), "--outage", "ebay@1s")
	<-bad.done
	assert.NotZero(t, bad.cmd.ProcessState.ExitCode())
	assert.Contains(t, bad.output.String(), `unknown platform "ebay"`)
}
