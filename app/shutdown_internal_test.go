package app

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// From the drain on, /readyz answers 503 (the balancer takes the instance
// out) while the API still answers, each response with Connection: close
// (the client's next request opens a connection, to another instance).
func TestDrainingFailsReadinessAndClosesConnections(t *testing.T) {
	sd := &Shutdown{log: slog.New(slog.DiscardHandler)}
	addr := serveWithShutdown(t, DefaultConfig(), sd)
	ready := newReadiness(readinessIn{Process: DefaultConfig().ProcessConfig, Queue: DefaultConfig().QueueConfig, Shutdown: sd}).Handler

	readyz := func() int {
		rec := httptest.NewRecorder()
		ready.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	healthz := func() *http.Response {
		res, err := http.Get("http://" + addr + "/healthz")
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		return res
	}

	assert.Equal(t, http.StatusOK, readyz())
	res := healthz()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.False(t, res.Close, "keep-alive before the drain")

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the drain period is not waited here: the state changes at once
	sd.Drain(ctx, "terminated")

	assert.Equal(t, http.StatusServiceUnavailable, readyz())
	res = healthz()
	assert.Equal(t, http.StatusOK, res.StatusCode, "the API still serves while draining")
	assert.True(t, res.Close, "Connection: close while draining")
}
