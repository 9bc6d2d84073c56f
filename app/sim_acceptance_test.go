package app_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// simServer serves the simulated external systems over HTTP on a ledger
// file in a temp dir, until the test ends.
func simServer(t *testing.T) (url, ledgerPath string) {
	t.Helper()
	ledgerPath = filepath.Join(t.TempDir(), "ledger.jsonl")
	ledger, err := simhttp.OpenLedger(ledgerPath)
	require.NoError(t, err)
	server, err := simhttp.NewServer(ledger, simhttp.ServerOptions{Logger: quiet})
	require.NoError(t, err)
	ts := httptest.NewServer(server)
	t.Cleanup(func() {
		server.Close()
		ts.Close()
		_ = ledger.Close()
	})
	return ts.URL, ledgerPath
}

// startTask sends an idempotent request that starts a background task and
// returns the task's id and its operation's id.
func startTaskAndOperation(t *testing.T, s *apitest.Server, path string, body any) (task, operation uuid.UUID) {
	t.Helper()
	r := s.Do(t, "POST", path, body, map[string]string{"Idempotency-Key": key()})
	require.Contains(t, []int{http.StatusAccepted, http.StatusCreated}, r.Status, string(r.Body))
	var parts map[string]struct {
		ID uuid.UUID `json:"id"`
	}
	r.JSON(t, &parts)
	op := parts["operation"].ID
	delete(parts, "operation")
	require.Len(t, parts, 1, "one task beside the operation: %s", r.Body)
	for _, p := range parts {
		task = p.ID
	}
	return task, op
}

// Every job type runs to success against the simulators served over HTTP
// by `once sim`'s server, with PostgreSQL and Redis: each external call is
// one entry in the simulator's ledger, under the task's request token.
func TestSimEveryJobTypeOverHTTPOnPostgres(t *testing.T) {
	simURL, ledgerPath := simServer(t)
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueRedis, true, true
	cfg.SimURL, cfg.SimTimeout = simURL, 5*time.Second
	s := apitest.Start(t, cfg, db)
	require.Nil(t, s.Sim, "no in-process platform")
	wait := func(op uuid.UUID) {
		t.Helper()
		got := s.WaitOperation(t, op, 30*time.Second)
		require.Equal(t, "succeeded", got.Status, got.Error)
	}

	shop := "sim-" + uuid.NewString()[:8]
	store, verifyOp := startTaskAndOperation(t, s, "/v1/stores", storeBody(shop))
	wait(verifyOp)
	product := createProduct(t, s)
	_, publishOp := startTaskAndOperation(t, s, "/v1/products/"+product.String()+"/publications", map[string]any{"store_id": store})
	wait(publishOp)
	_, op := startTaskAndOperation(t, s, "/v1/stores/"+store.String()+"/syncs", nil)
	wait(op)
	_, aiOp := startTaskAndOperation(t, s, "/v1/ai-tasks", map[string]any{"product_id": product, "kind": "text"})
	wait(aiOp)
	const source = "https://supplier.example/sim/a.png"
	_, op = startTaskAndOperation(t, s, "/v1/material-transfers", map[string]any{"source_urls": []string{source}})
	wait(op)
	_, op = startTaskAndOperation(t, s, "/v1/media/"+uploadedMedia(t, s).String()+"/complete", nil)
	wait(op) // media processing calls no external system

	ledger, err := simhttp.ReadLedger(ledgerPath)
	require.NoError(t, err)
	for _, want := range []simhttp.Filter{
		{Kind: simhttp.KindVerify, Token: s.RequestToken(t, verifyOp), EffectsOnly: true},
		{Kind: simhttp.KindListing, Token: s.RequestToken(t, publishOp), EffectsOnly: true},
		{Kind: simhttp.KindGenerate, Token: s.RequestToken(t, aiOp), EffectsOnly: true},
		{Kind: simhttp.KindCatalog, Subject: shop},
		{Kind: simhttp.KindFetch, Subject: source},
	} {
		assert.Len(t, simhttp.Select(ledger, want), 1, "%+v", want)
	}
	assert.Len(t, ledger, 5, "nothing else reached the external systems")
	assert.Len(t, simhttp.Select(ledger, simhttp.Filter{EffectsOnly: true}), 3)

	raw, err := os.ReadFile(ledgerPath)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), testAPISecret, "the simulator keeps no credential")
	assert.NotContains(t, string(raw), testAPIKey)
}

// ONCE_SIM_URL wires the HTTP clients as the three ports; without it the
// in-process simulators stay.
func TestSimURLSelectsTheHTTPClients(t *testing.T) {
	for name, simURL := range map[string]string{"http": "http://127.0.0.1:1", "in-process": ""} {
		t.Run(name, func(t *testing.T) {
			cfg := apitest.Config("")
			cfg.Worker, cfg.SimURL = true, simURL
			require.NoError(t, fx.ValidateApp(app.Serve(cfg, quiet)))
			var gw ports.PlatformGateway
			var ai ports.AIProvider
			var src ports.MaterialSource
			a := fxtest.New(t, app.Serve(cfg, slog.New(slog.DiscardHandler)), fx.Populate(&gw, &ai, &src))
			a.RequireStart()
			defer a.RequireStop()
			for _, port := range []any{gw, ai, src} {
				_, isHTTP := port.(*simhttp.Client)
				assert.Equal(t, simURL != "", isHTTP, "%T", port)
			}
		})
	}
	pg := apitest.Config("postgres://once_service@127.0.0.1:5432/once?sslmode=disable")
	pg.Worker, pg.Dispatcher, pg.Queue, pg.SimURL = true, true, app.QueueRedis, "http://127.0.0.1:1"
	require.NoError(t, fx.ValidateApp(app.Serve(pg, quiet)))
}

func TestSimConfigRefusesABadURL(t *testing.T) {
	for _, u := range []string{"127.0.0.1:8090", "ftp://sim", "http://"} {
		cfg := apitest.Config("")
		cfg.SimURL = u
		assert.ErrorContains(t, cfg.Validate(), "ONCE_SIM_URL", u)
	}
	cfg := apitest.Config("")
	cfg.SimTimeout = 0
	assert.ErrorContains(t, cfg.Validate(), "ONCE_SIM_TIMEOUT")
}
