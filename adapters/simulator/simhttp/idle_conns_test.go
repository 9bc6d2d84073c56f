package simhttp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/ports"
)

// A worker has as many calls out at once as it has slots. The client
// keeps that many connections open between calls (IdleConns): two rounds
// of 32 calls at once reach the server on 32 connections. Kept fewer,
// every call past them dialled a connection of its own, and closed it
// after, a socket left in TIME_WAIT a call.
func TestSimClientKeepsAConnectionForEveryCallItHasOut(t *testing.T) {
	const calls = 32
	var dialled atomic.Int32
	var arrived sync.WaitGroup
	releases := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var round atomic.Int32
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		release := releases[round.Load()]
		arrived.Done()
		<-release
		_, _ = io.WriteString(w, `{"valid":true}`)
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	c, err := simhttp.NewClient(simhttp.ClientConfig{URL: ts.URL, IdleConns: calls})
	require.NoError(t, err)

	for r := range releases {
		// All calls out at once: each holds its connection until every
		// one has arrived.
		round.Store(int32(r))
		arrived.Add(calls)
		errs := make(chan error, calls)
		for range calls {
			go func() {
				_, err := c.VerifyCredentials(context.Background(), ports.VerifyCredentialsRequest{
					RequestToken: "t", Platform: "shopify", ExternalShopID: "s", Credentials: shopCreds,
				})
				errs <- err
			}()
		}
		arrived.Wait()
		close(releases[r])
		for range calls {
			require.NoError(t, <-errs)
		}
	}
	require.Equal(t, int32(calls), dialled.Load(), "connections the server accepted over two rounds of %d calls at once", calls)
}
