package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/redistest"
)

// opsWorld is the service split as docs/configuration.md recommends: `once serve`
// with the API only, `once dispatch` and `once work`, each a process with
// its own ops listener, on PostgreSQL and Redis, logging JSON.
type opsWorld struct {
	t     *testing.T
	api   string // http://host:port of serve's API
	token string
	// workspace is the one token acts in.
	workspace uuid.UUID
	procs     map[string]*process // by command
	ops       map[string]string   // each command's ops listener, http://host:port
	env       map[string][]string // each command's environment
	// queuePrefix starts the names of its queues.
	queuePrefix string
}

func newOpsWorld(t *testing.T, queue, brokerAddr string, extra ...string) *opsWorld {
	return newOpsWorldOn(t, pgtest.New(t), queue, brokerAddr, extra...)
}

// newOpsWorldOn is newOpsWorld on db; extra may override any variable
// (DATABASE_URL, to reach db through a pooler).
func newOpsWorldOn(t *testing.T, db *pgtest.DB, queue, brokerAddr string, extra ...string) *opsWorld {
	cfg := apitest.Config(db.AppDSN)
	switch queue {
	case app.QueueAMQP:
		deleteAMQPTopicsLater(t, "amqp://guest:guest@"+brokerAddr+"/", cfg.QueuePrefix)
	case app.QueueRedis:
		redistest.DeleteKeysLater(t, "redis://"+brokerAddr+"/0", cfg.QueuePrefix)
	}
	env := append([]string{
		"DATABASE_URL=" + db.AppDSN,
		"ONCE_JWT_SECRET=" + cfg.JWTSecret,
		"ONCE_IDEMPOTENCY_SECRETS=" + cfg.IdempotencySecrets,
		"ONCE_CREDENTIAL_KEYS=" + cfg.CredentialKeys,
		"ONCE_QUEUE=" + queue,
		"ONCE_REDIS_URL=redis://" + brokerAddr + "/0",
		"ONCE_AMQP_URL=amqp://guest:guest@" + brokerAddr + "/",
		"ONCE_QUEUE_PREFIX=" + cfg.QueuePrefix,
		"ONCE_DISPATCH_POLL_INTERVAL=100ms",
		"ONCE_LOG_FORMAT=json",
		"ONCE_LOG_LEVEL=info",
		// The split's Dispatcher delivers everything, as these tests
		// expect of it; the relay has tests of its own
		// (relay_crash_test.go). extra may turn it on.
		"ONCE_RELAY=false",
	}, extra...)
	user := uuid.New()
	ws := lastLine(runOnce(t, env, "workspace", "create", "--name", "ops", "--admin", user.String()))
	w := &opsWorld{
		t: t, api: "http://" + freeAddr(t),
		token:     lastLine(runOnce(t, env, "token", "--workspace", ws, "--user", user.String())),
		workspace: uuid.MustParse(ws),
		procs:     map[string]*process{}, ops: map[string]string{}, env: map[string][]string{},
		queuePrefix: cfg.QueuePrefix,
	}
	for _, command := range []string{"serve", "dispatch", "work"} {
		addr := freeAddr(t)
		w.ops[command] = "http://" + addr
		penv := append(withoutTokenSecret(env, command), "ONCE_OPS_ADDR="+addr)
		if command == "serve" {
			penv = append(penv, "ONCE_HTTP_ADDR="+strings.TrimPrefix(w.api, "http://"), "ONCE_DISPATCHER=false", "ONCE_WORKER=false")
		}
		w.env[command] = penv
		w.procs[command] = startOnce(t, penv, command)
	}
	for command, ops := range w.ops {
		waitHealthy(t, w.procs[command], ops+"/healthz")
	}
	waitHealthy(t, w.procs["serve"], w.api+"/healthz")
	// Healthy is listening; ready is started: the workers consume every
	// topic (a worker answers its first job while it still subscribes the
	// others, and a broker lost then is a failed start, which exits).
	for command := range w.ops {
		apitest.Eventually(t, 30*time.Second, command+" ready", func() bool {
			status, _ := w.ready(command)
			return status == http.StatusOK
		})
	}
	return w
}

// withoutTokenSecret is env, without the token secret for the processes
// that verify no token (dispatch, work): they start without one.
func withoutTokenSecret(env []string, command string) []string {
	if command == "serve" {
		return append([]string{}, env...)
	}
	var out []string
	for _, v := range env {
		if !strings.HasPrefix(v, "ONCE_JWT_SECRET=") {
			out = append(out, v)
		}
	}
	return out
}

// lastLine is what a command printed last (its log lines come first).
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// call sends an API request to serve and returns the status and body.
func (w *opsWorld) call(method, path string, body any) (int, []byte) {
	w.t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(w.t, err)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, w.api+path, r)
	require.NoError(w.t, err)
	req.Header.Set("Authorization", "Bearer "+w.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
	}
	return get(w.t, req)
}

func get(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, out
}

// scrape GETs path on command's ops listener.
func (w *opsWorld) scrape(command, path string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.ops[command]+path, nil)
	require.NoError(w.t, err)
	status, body := get(w.t, req)
	return status, string(body)
}

// connectStore starts a credentials check (a job) and returns its
// operation.
func (w *opsWorld) connectStore(shop string) string {
	w.t.Helper()
	status, body := w.call(http.MethodPost, "/v1/stores", map[string]any{
		"platform": "shopify", "name": "Ops shop", "external_shop_id": shop,
		"credentials": map[string]any{"api_key": "ak_ops", "api_secret": "sk_ops_secret"},
	})
	require.Equal(w.t, http.StatusCreated, status, string(body))
	var created struct {
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	require.NoError(w.t, json.Unmarshal(body, &created))
	return created.Operation.ID
}

// waitSucceeded waits until every operation succeeded.
func (w *opsWorld) waitSucceeded(ops []string, timeout time.Duration) {
	w.t.Helper()
	apitest.Eventually(w.t, timeout, "every operation succeeded", func() bool {
		for _, id := range ops {
			status, body := w.call(http.MethodGet, "/v1/operations/"+id, nil)
			require.Equal(w.t, http.StatusOK, status, string(body))
			var op struct {
				Status string `json:"status"`
				Error  string `json:"error"`
			}
			require.NoError(w.t, json.Unmarshal(body, &op))
			require.NotEqual(w.t, "failed", op.Status, op.Error)
			if op.Status != "succeeded" {
				return false
			}
		}
		return true
	})
}

// readiness is the body of /readyz.
type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

func (w *opsWorld) ready(command string) (int, readiness) {
	w.t.Helper()
	status, body := w.scrape(command, "/readyz")
	var r readiness
	require.NoError(w.t, json.Unmarshal([]byte(body), &r), body)
	return status, r
}

// Each process serves /metrics, /healthz and /readyz on its own ops
// address, and its counters count the work it did: serve the HTTP
// requests, dispatch the publish, work the job. The public API serves no
// metrics.
func TestOpsListenersOfServeDispatchAndWork(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	w := newOpsWorld(t, app.QueueRedis, "127.0.0.1:6379", "ONCE_OPERATOR_TOKEN="+opsOperatorToken)
	for command, checks := range map[string][]string{
		"serve":    {"shutdown", "database", "migrations"},
		"dispatch": {"shutdown", "database", "migrations", "broker", "publishing"},
		"work":     {"shutdown", "database", "migrations", "broker", "subscriptions"},
	} {
		status, r := w.ready(command)
		require.Equal(t, http.StatusOK, status, "%s: %+v", command, r)
		assert.Equal(t, "ready", r.Status)
		for _, c := range checks {
			assert.Equal(t, "ok", r.Checks[c], "%s: check %s", command, c)
		}
		assert.Len(t, r.Checks, len(checks), command)
	}

	w.waitSucceeded([]string{w.connectStore("ops-1")}, time.Minute)

	metrics := map[string]string{}
	for command := range w.ops {
		status, body := w.scrape(command, "/metrics")
		require.Equal(t, http.StatusOK, status)
		metrics[command] = body
		assert.Contains(t, body, "once_build_info{", command)
		assert.Contains(t, body, `go_sql_in_use_connections{db_name="once"}`, command)
		assert.Contains(t, body, `once_outbox_events{status="dispatched"} 1`, command)
	}
	verify := model.EventStoreCredentialsVerify
	assert.Contains(t, metrics["serve"], `once_http_requests_total{code="201",method="POST",route="/v1/stores"} 1`)
	assert.Contains(t, metrics["serve"], `once_http_request_duration_seconds_count{method="GET",route="/v1/operations/{id}"}`)
	assert.Contains(t, metrics["serve"], "once_dispatch_published_total 0", "serve runs no Dispatcher")
	assert.False(t, strings.Contains(metrics["serve"], "once_dispatch_broker_up"), "serve runs no Dispatcher")

	assert.Contains(t, metrics["dispatch"], "once_dispatch_published_total 1")
	assert.Contains(t, metrics["dispatch"], "once_dispatch_broker_up 1")
	// once_dispatch_batch_events and the round histograms fill once the
	// Dispatcher calls Observer.Round (adapters/prometheus tests them).
	assert.Contains(t, metrics["dispatch"], "once_dispatch_batch_events_count")
	assert.Contains(t, metrics["dispatch"], "once_dispatch_delivery_latency_seconds_count 1")
	assert.False(t, strings.Contains(metrics["dispatch"], "once_http_requests_total{"), "dispatch answers no API requests")

	assert.Contains(t, metrics["work"], fmt.Sprintf(`once_worker_jobs_total{outcome="succeeded",type=%q} 1`, verify))
	assert.Contains(t, metrics["work"], fmt.Sprintf(`once_worker_jobs_in_flight{type=%q} 0`, verify))
	assert.Contains(t, metrics["work"], "once_dispatch_published_total 0", "work runs no Dispatcher")

	status, _ := w.call(http.MethodGet, "/metrics", nil)
	assert.Equal(t, http.StatusNotFound, status, "no metrics on the public API")

	// The worker's operator actions take the operator token.
	pause := w.ops["work"] + "/destinations/pause?destination=ai/default"
	status, body := w.operatorPost(pause, "")
	assert.Equal(t, http.StatusUnauthorized, status, body)
	status, body = w.operatorPost(pause, opsOperatorToken)
	assert.Equal(t, http.StatusNoContent, status, body)
}

// opsOperatorToken is ONCE_OPERATOR_TOKEN where a test sets it.
const opsOperatorToken = "ops-test-operator-token-0123456789abcdef"

// operatorPost POSTs to an ops listener's url with token as the bearer
// (none when empty), as curl does.
func (w *opsWorld) operatorPost(url, token string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	require.NoError(w.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	status, body := get(w.t, req)
	return status, string(body)
}

// The split processes on a Redis Cluster of three masters, as ONCE_REDIS_URL
// names it: each starts (its broker check passes), is ready, and a job
// goes from serve through dispatch and the Cluster's streams to work.
func TestSplitProcessesOnARedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	cluster := redistest.Cluster(t)
	w := newOpsWorld(t, app.QueueRedis, "127.0.0.1:6379", "ONCE_REDIS_URL="+cluster.URL())
	w.waitSucceeded([]string{w.connectStore("cluster-1")}, time.Minute)
	status, r := w.ready("dispatch")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok", r.Checks["publishing"])
}

// The delivery flow, split in processes logging JSON, through a broker
// outage (Redis, RabbitMQ): every line any of them writes is a JSON object
// with a level and a message, one component, no stack trace and
// no broker address; while the broker is away the Dispatcher's /readyz
// says so, sanitized.
func TestEveryLogLineIsJSONThroughABrokerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for queue, broker := range map[string]string{app.QueueRedis: "127.0.0.1:6379", app.QueueAMQP: "127.0.0.1:5672"} {
		t.Run(queue, func(t *testing.T) { logsThroughAnOutage(t, queue, broker) })
	}
}

func logsThroughAnOutage(t *testing.T, queue, broker string) {
	proxy := faultproxy.Start(t, broker)
	w := newOpsWorld(t, queue, proxy.Addr(), "ONCE_DISPATCH_BREAKER_OPEN=200ms")
	ops := []string{w.connectStore("before-1")}
	w.waitSucceeded(ops, time.Minute)

	proxy.Down()
	for i := range 3 {
		ops = append(ops, w.connectStore(fmt.Sprintf("during-%d", i)))
	}
	apitest.Eventually(t, 30*time.Second, "the Dispatcher holding back, not ready", func() bool {
		_, metrics := w.scrape("dispatch", "/metrics")
		status, _ := w.ready("dispatch")
		return status == http.StatusServiceUnavailable && strings.Contains(metrics, "once_dispatch_broker_up 0")
	})
	_, r := w.ready("dispatch")
	assert.Equal(t, "not ready", r.Status)
	assert.Equal(t, "ok", r.Checks["database"])
	assert.Contains(t, r.Checks["broker"], "unreachable")
	assert.NotContains(t, r.Checks["broker"], proxy.Addr(), "the broker's address is not in the answer")
	status, _ := w.ready("serve")
	assert.Equal(t, http.StatusOK, status, "serve needs no broker")
	proxy.Up(t)

	w.waitSucceeded(ops, 2*time.Minute)

	for command, p := range w.procs {
		out := p.output.String()
		lines := 0
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			lines++
			var entry map[string]any
			if !assert.NoError(t, json.Unmarshal([]byte(line), &entry), "%s wrote a line that is not JSON: %q", command, line) {
				continue
			}
			assert.NotEmpty(t, entry["level"], "%s: %s", command, line)
			assert.NotEmpty(t, entry["msg"], "%s: %s", command, line)
			assert.Equal(t, 1, strings.Count(line, `"component":`), "%s: one component: %s", command, line)
			assert.NotContains(t, line, ".go:", "%s: no source positions or stack traces: %s", command, line)
			assert.NotContains(t, line, proxy.Addr(), "%s: no broker address: %s", command, line)
			assert.NotContains(t, line, "guest:guest", "%s: no credentials: %s", command, line)
		}
		require.NoError(t, sc.Err())
		assert.Positive(t, lines, "%s logged", command)
		t.Logf("%s: %d JSON lines", command, lines)
		if os.Getenv("OPS_DUMP") != "" {
			t.Log(out)
		}
	}
}
