package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The per-workspace limits on the real thing: two `once serve` processes on
// one PostgreSQL share one Redis. Workspace A sends a fixed number of
// writes (requestsA) paced at twenty times its rate (about 30 s), spread
// over both processes; workspace B sends half its rate meanwhile. A gets 429s with Retry-After and the RateLimit headers, B's
// requests all succeed, neither gets a 5xx, and A's accepted writes are
// one allowance, not one per process: at most its burst plus its rate over
// the time the run took (that bound is an upper one whatever the
// machine's speed; a limiter per process would accept about twice it).
func TestLimitsHoldAcrossTwoServeProcessesSharingRedis(t *testing.T) {
	const (
		rate, burst = 2, 2 // per second, for workspace A and B alike
		aPerSecond  = 20 * rate
		requestsA   = 30 * aPerSecond // a count, not a duration: the pace sets how long it takes
		senders     = 16
	)
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	h := apitest.Start(t, cfg, db) // makes the workspaces and tokens; sends nothing
	wsB, userB := uuid.New(), uuid.New()
	_, err := h.WS.Create(t.Context(), wsB, "quiet", userB)
	require.NoError(t, err)
	tokens := map[string]string{"A": h.Token, "B": h.TokenFor(t, wsB, userB)}

	env := []string{
		"DATABASE_URL=" + db.AppDSN,
		"ONCE_JWT_SECRET=" + cfg.JWTSecret,
		"ONCE_IDEMPOTENCY_SECRETS=" + cfg.IdempotencySecrets,
		"ONCE_CREDENTIAL_KEYS=" + cfg.CredentialKeys,
		"ONCE_OBJECT_STORE=memory",
		"ONCE_DISPATCHER=false",
		"ONCE_WORKER=false",
		"ONCE_LOG_LEVEL=warn",
		"ONCE_RATE_LIMIT=" + fmt.Sprintf("%d/s:%d", rate, burst),
		"ONCE_RATE_LIMIT_STORE=redis",
		// What is tested here is the shared allowance, not the fail-open
		// (app's tests have it): on a loaded test machine Redis may take
		// longer than the production bound of 100 ms to answer, and the
		// writes that then go through unmetered would exceed it.
		"ONCE_RATE_LIMIT_TIMEOUT=5s",
		"ONCE_REDIS_URL=redis://127.0.0.1:6379/0",
	}
	apis := make([]string, 2)
	for i := range apis {
		addr := freeAddr(t)
		p := startOnce(t, append(env, "ONCE_HTTP_ADDR="+addr), "serve")
		apis[i] = "http://" + addr
		waitHealthy(t, p, apis[i]+"/healthz")
	}

	type answer struct {
		workspace string
		process   int
		status    int
		header    http.Header
	}
	var mu sync.Mutex
	var answers []answer
	send := func(workspace string, n int) {
		body, err := json.Marshal(map[string]any{
			"platform": "shopify", "name": "Limits shop", "external_shop_id": fmt.Sprintf("%s-%d-%s", workspace, n, uuid.NewString()[:8]),
			"credentials": map[string]any{"api_key": "ak_limits", "api_secret": "sk_limits_secret"},
		})
		require.NoError(t, err)
		process := n % len(apis)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, apis[process]+"/v1/stores", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tokens[workspace])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		mu.Lock()
		answers = append(answers, answer{workspace, process, res.StatusCode, res.Header})
		mu.Unlock()
	}

	// A's requests at aPerSecond, B's at half its rate, from a pool of
	// senders: a slow answer delays no later request.
	type job struct {
		workspace string
		n         int
	}
	jobs := make(chan job, senders)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for j := range jobs {
				send(j.workspace, j.n)
			}
		})
	}
	start := time.Now()
	tick := time.NewTicker(time.Second / aPerSecond)
	for n := range requestsA {
		<-tick.C
		jobs <- job{"A", n}
		if n%(2*aPerSecond/rate) == 0 {
			jobs <- job{"B", n / (2 * aPerSecond / rate)}
		}
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)

	counts := map[string]map[int]int{"A": {}, "B": {}}
	acceptedBy := map[int]int{}
	refusedBy := map[string]int{}
	for _, a := range answers {
		counts[a.workspace][a.status]++
		assert.Less(t, a.status, 500, "%s got %d", a.workspace, a.status)
		switch {
		case a.workspace == "A" && a.status == http.StatusCreated:
			acceptedBy[a.process]++
		case a.status == http.StatusTooManyRequests:
			// Refused by the rate, or by the cap on A's requests in
			// progress in that process (auto: half of the pool of 10):
			// sixteen senders can have more than five at once there.
			policy, _, _ := strings.Cut(a.header.Get("RateLimit-Policy"), ";")
			refusedBy[policy]++
			secs, err := strconv.Atoi(a.header.Get("Retry-After"))
			if assert.NoError(t, err, "Retry-After") {
				assert.Positive(t, secs)
				assert.Equal(t, fmt.Sprintf(`%s;r=0;t=%d`, policy, secs), a.header.Get("RateLimit"))
			}
			assert.Contains(t, []string{
				fmt.Sprintf(`"writes";q=%d;w=1;once-burst=%d`, rate, burst),
				`"concurrency";q=5;qu="concurrent-requests"`,
			}, a.header.Get("RateLimit-Policy"))
		}
	}
	accepted := counts["A"][http.StatusCreated]
	bound := burst + int(float64(rate)*elapsed.Seconds()) + 1
	t.Logf("in %s: A %v (accepted by process: %v; one allowance allows at most %d; refused by policy: %v), B %v",
		elapsed.Round(time.Millisecond), counts["A"], acceptedBy, bound, refusedBy, counts["B"])

	assert.Equal(t, map[int]int{http.StatusCreated: counts["B"][http.StatusCreated]}, counts["B"], "every request of B succeeds")
	assert.Positive(t, counts["B"][http.StatusCreated])
	assert.Equal(t, len(answers)-counts["B"][http.StatusCreated], counts["A"][http.StatusCreated]+counts["A"][http.StatusTooManyRequests],
		"A gets 201 or 429, nothing else")
	assert.Positive(t, refusedBy[`"writes"`], "A is limited by its rate")
	assert.LessOrEqual(t, accepted, bound, "A's accepted writes are one allowance shared by both processes")
	assert.Len(t, acceptedBy, 2, "both processes accepted some of A's writes")
}
