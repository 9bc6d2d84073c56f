package queue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/queuetest"
)

// simCall is the payload of the ordering test's jobs: which call the
// handler makes to the simulator, for which shop, under which token.
type simCall struct {
	Verify bool   `json:"verify"`
	Shop   string `json:"shop"`
	Token  string `json:"token"`
}

// Jobs of one ordering key never overlap and reach their destination in
// the order they were published, while jobs of other keys run beside
// them. The simulator measures it: its concurrency read-out sees every
// call the handlers make with the context the worker gives them, as the
// real kinds' adapters do. The ordering key's jobs and the others are
// published interleaved, all handed out at once; the simulator adds
// latency to every call, so the key's calls would overlap if the worker
// let them, and holds the other keys' calls until all of them are in
// flight together (the proof that the worker runs in parallel what it may,
// so the key's one-at-a-time is its ordering, not a lack of slots).
func TestWorkerRunsAnOrderingKeyOneAtATimeInPublishOrder(t *testing.T) {
	const perSide = 20
	ctx := context.Background()
	sim := startOrderingSim(t)
	admin := simhttp.NewAdmin(sim.URL)
	client, err := simhttp.NewClient(simhttp.ClientConfig{URL: sim.URL, Timeout: time.Minute})
	require.NoError(t, err)
	require.NoError(t, admin.Inject(ctx, simhttp.Fault{Kind: simhttp.KindVerify, Action: simhttp.ActionHold, Times: perSide}))

	ordered, others := make(chan error, perSide), make(chan error, perSide)
	h := ports.MessageHandlerFunc(func(ctx context.Context, m ports.Message) error {
		var c simCall
		if err := json.Unmarshal(m.Payload, &c); err != nil {
			return err
		}
		creds := model.StoreCredentials{APIKey: "ak_order", APISecret: "sk_order_secret"}
		if c.Verify {
			_, err := client.VerifyCredentials(ctx, ports.VerifyCredentialsRequest{RequestToken: c.Token, Platform: "shopify", ExternalShopID: c.Shop, Credentials: creds})
			others <- err
			return err
		}
		_, err := client.CreateListing(ctx, ports.CreateListingRequest{RequestToken: c.Token, Platform: "shopify", ExternalShopID: c.Shop,
			Credentials: creds, Title: "Mug", PriceMinor: 900, Currency: "EUR"})
		ordered <- err
		return err
	})
	pub, sub := memqueue.New(memqueue.Config{Prefetch: 4 * perSide})
	defer pub.Close()
	w, err := queue.NewWorker(sub, dropFailures{}, dropFailures{}, map[string]ports.MessageHandler{"a": h},
		queue.WorkerConfig{Concurrency: 4 * perSide}, queuetest.Logger(t))
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	defer w.Close()

	const key = "publish/product-1/store-1"
	ws := uuid.New()
	publish := func(orderingKey string, c simCall) {
		payload, err := json.Marshal(c)
		require.NoError(t, err)
		m := ports.Message{ID: uuid.New(), Type: "a", WorkspaceID: ws, Payload: payload,
			Destination: "shopify/" + c.Shop, OrderingKey: orderingKey}
		require.NoError(t, pub.Publish(queue.Topic("", "a"), queue.ToMessage(m)))
	}
	for i := range perSide {
		publish(key, simCall{Shop: "ordered", Token: fmt.Sprintf("k-%02d", i)})
		publish(fmt.Sprintf("other-%d", i), simCall{Verify: true, Shop: "others", Token: fmt.Sprintf("o-%02d", i)})
	}

	// The key's jobs all end while the others' calls are held open.
	for range perSide {
		require.NoError(t, receive(t, ordered))
	}
	require.Eventually(t, func() bool {
		held, err := admin.Held(ctx)
		require.NoError(t, err)
		return len(held) == perSide
	}, time.Minute, 5*time.Millisecond, "the other keys' calls in flight together")
	_, err = admin.Release(ctx)
	require.NoError(t, err)
	for range perSide {
		require.NoError(t, receive(t, others))
	}

	k := simhttp.InFlightOrdering(key)
	got, err := admin.InFlight(ctx, k)
	require.NoError(t, err)
	assert.Equal(t, perSide, got.MaxInFlight[simhttp.InFlightShop(model.Destination{System: "shopify", Account: "others"})],
		"the other keys' calls ran at once")
	assert.Equal(t, 1, got.MaxInFlight[k], "the key's calls never overlap")
	calls := got.Calls[k]
	require.Len(t, calls, perSide)
	want, tokens := make([]string, perSide), make([]string, perSide)
	for i, c := range calls {
		want[i], tokens[i] = fmt.Sprintf("k-%02d", i), c.Token
		if i > 0 {
			assert.False(t, c.Start.Before(calls[i-1].End), "%s started before %s ended", c.Token, calls[i-1].Token)
		}
	}
	assert.Equal(t, want, tokens, "the key's calls, in publish order")
}

// startOrderingSim serves the simulator, every call taking a few
// milliseconds, until the test ends.
func startOrderingSim(t *testing.T) *httptest.Server {
	t.Helper()
	ledger, err := simhttp.OpenLedger(filepath.Join(t.TempDir(), "ledger.jsonl"))
	require.NoError(t, err)
	server, err := simhttp.NewServer(ledger, simhttp.ServerOptions{Latency: 20 * time.Millisecond})
	require.NoError(t, err)
	ts := httptest.NewServer(server)
	t.Cleanup(func() {
		server.Close() // ends held calls, so the HTTP server can close
		ts.Close()
		assert.NoError(t, ledger.Close())
	})
	return ts
}

// receive is the next handler's outcome on c.
func receive(t *testing.T, c <-chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(time.Minute):
		t.Fatal("a job never ended")
		return nil
	}
}
