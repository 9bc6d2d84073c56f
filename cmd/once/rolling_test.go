package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

// Rolling restarts lose no request (docs/operating.md, "Stopping and
// rolling restarts"): two `once serve` behind Debian's HAProxy, which checks
// each one's /readyz and never retries a request, take a steady load of
// store creates while each is restarted twice (SIGTERM, exit, start
// again), the way a deploy does it. Every request is answered 2xx, and a
// request held in flight (blocked on a lock in PostgreSQL) when the
// SIGTERM arrives is answered too, after the drain.
func TestRollingRestartBehindHAProxyFailsNoRequest(t *testing.T) {
	r := newRollingRun(t, haproxyOrSkip(t))
	load := r.startLoad(4)
	for round := range 2 {
		for _, inst := range r.instances {
			r.restartWithASlowRequest(inst, round)
		}
	}
	sent, failures := load.stop()
	assert.Empty(t, failures, "requests that failed through HAProxy")
	require.Positive(t, sent)
	t.Logf("%d creates through HAProxy during 4 restarts, %d failed", sent, len(failures))

	// Every create answered 201 exists.
	var stores int
	require.NoError(t, r.super.QueryRow(`SELECT count(*) FROM stores WHERE workspace_id = $1`, r.workspace).Scan(&stores))
	assert.Equal(t, int(load.created.Load()), stores)
}

// haproxyOrSkip is the path of haproxy; the test is skipped without it, or
// with -short (it starts processes).
func haproxyOrSkip(t *testing.T) string {
	if testing.Short() {
		t.Skip("starts processes")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed (scripts/services.sh installs it)")
	}
	return haproxy
}

// serveInstance is one `once serve` with fixed API and ops ports, so that
// HAProxy finds it again after a restart.
type serveInstance struct {
	name     string
	api, ops string // host:port
	proc     *process
}

type rollingRun struct {
	t         *testing.T
	env       []string
	token     string
	user      string
	workspace uuid.UUID
	super     *sql.DB
	instances []*serveInstance
	front     string // HAProxy's frontend, host:port
	stats     string // HAProxy's stats socket
	// tokens, when set, are the tokens post takes turns with instead of
	// token (the secret rotation's test adds each step's).
	tokens atomic.Pointer[[]string]
	turn   atomic.Int64
}

func newRollingRun(t *testing.T, haproxy string) *rollingRun {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	r := &rollingRun{t: t, env: []string{
		"DATABASE_URL=" + db.AppDSN,
		"ONCE_JWT_SECRET=" + cfg.JWTSecret,
		"ONCE_IDEMPOTENCY_SECRETS=" + cfg.IdempotencySecrets,
		"ONCE_CREDENTIAL_KEYS=" + cfg.CredentialKeys,
		"ONCE_QUEUE=memory",
		"ONCE_DISPATCHER=false",
		"ONCE_WORKER=false",
		"ONCE_LOG_FORMAT=json",
		// The drain only has to outlast HAProxy's detection (inter 200ms,
		// fall 3 below): a generous margin, not a measured time.
		"ONCE_SHUTDOWN_DRAIN=3s",
		"ONCE_SHUTDOWN_TIMEOUT=60s",
	}}
	super, err := sql.Open("pgx", db.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	r.super = super

	user := uuid.New()
	r.user = user.String()
	r.workspace = uuid.MustParse(lastLine(runOnce(t, r.env, "workspace", "create", "--name", "rolling", "--admin", user.String())))
	r.token = lastLine(runOnce(t, r.env, "token", "--workspace", r.workspace.String(), "--user", user.String()))

	for _, name := range []string{"a", "b"} {
		inst := &serveInstance{name: name, api: freeAddr(t), ops: freeAddr(t)}
		r.instances = append(r.instances, inst)
		r.start(inst)
	}
	r.startHAProxy(haproxy)
	for _, inst := range r.instances {
		r.waitUp(inst)
	}
	return r
}

func (r *rollingRun) start(inst *serveInstance) {
	inst.proc = startOnce(r.t, append(append([]string{}, r.env...),
		"ONCE_HTTP_ADDR="+inst.api, "ONCE_OPS_ADDR="+inst.ops, "ONCE_INSTANCE_ID=serve-"+inst.name), "serve")
	waitHealthy(r.t, inst.proc, "http://"+inst.ops+"/readyz")
}

// startHAProxy runs a private HAProxy (never the system's) in the
// foreground: round robin over the two instances, each checked on its ops
// port's /readyz every 200 ms (down after 3 failures, up after 2
// successes), no retry and no redispatch: a request sent to an instance
// that does not answer fails, as it would for the client. A check may
// take up to 5 s (timeout check): without it HAProxy gives a check only
// the interval, and on a busy machine a slow /readyz of the instance that
// stays would take it out too, leaving no server.
func (r *rollingRun) startHAProxy(haproxy string) {
	t := r.t
	dir := t.TempDir()
	r.front = freeAddr(t)
	r.stats = filepath.Join(dir, "stats.sock")
	var servers strings.Builder
	for _, inst := range r.instances {
		_, opsPort, _ := net.SplitHostPort(inst.ops)
		fmt.Fprintf(&servers, "    server %s %s check port %s\n", inst.name, inst.api, opsPort)
	}
	conf := fmt.Sprintf(`global
    stats socket %s mode 600 level admin
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout check 5s
    retries 0
frontend api
    bind %s
    default_backend serve
backend serve
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 200ms fall 3 rise 2
%s`, r.stats, r.front, servers.String())
	path := filepath.Join(dir, "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
	out, err := exec.Command(haproxy, "-c", "-f", path).CombinedOutput()
	require.NoError(t, err, "haproxy -c: %s", out)

	cmd := exec.Command(haproxy, "-db", "-f", path)
	log := &testkit.LogBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if t.Failed() {
			t.Logf("haproxy output:\n%s", log.String())
		}
	})
	apitest.Eventually(t, 30*time.Second, "haproxy stats socket", func() bool {
		_, err := r.serverStatus()
		return err == nil
	})
}

// serverStatus reads each server's status (UP, DOWN, ...) from HAProxy's
// stats socket.
func (r *rollingRun) serverStatus() (map[string]string, error) {
	conn, err := net.Dial("unix", r.stats)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("show stat\n")); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(conn)
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("# ")))).ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("show stat: %q: %v", raw, err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	status := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) > col["status"] && row[col["pxname"]] == "serve" {
			status[row[col["svname"]]] = row[col["status"]]
		}
	}
	return status, nil
}

func (r *rollingRun) waitUp(inst *serveInstance) {
	apitest.Eventually(r.t, 30*time.Second, "haproxy sees "+inst.name+" up", func() bool {
		s, err := r.serverStatus()
		return err == nil && s[inst.name] == "UP"
	})
}

// restartWithASlowRequest restarts inst the way a deploy does, with a
// product create sent to it directly and held in flight through the
// SIGTERM: it waits on a lock the test holds on the products table (the
// load creates stores, which the lock does not touch) until inst has
// drained and stopped accepting; then the lock goes and the request must
// be answered.
func (r *rollingRun) restartWithASlowRequest(inst *serveInstance, round int) {
	t := r.t
	tx, err := r.super.Begin()
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.Exec(`LOCK TABLE products IN EXCLUSIVE MODE`)
	require.NoError(t, err)

	slow := make(chan error, 1)
	go func() {
		body := fmt.Sprintf(`{"title":"held through restart %d of %s","price_minor":100,"currency":"EUR"}`, round, inst.name)
		status, out, err := r.post("http://"+inst.api, "/v1/products", body, "")
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("%d %s", status, out)
		}
		slow <- err
	}()
	apitest.Eventually(t, 30*time.Second, "the product create waits on the lock", func() bool {
		var n int
		require.NoError(t, r.super.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%insert%products%'
			AND pid <> pg_backend_pid()`).Scan(&n))
		return n == 1
	})

	before := len(inst.proc.output.String())
	require.NoError(t, inst.proc.cmd.Process.Signal(syscall.SIGTERM))
	apitest.Eventually(t, 30*time.Second, "haproxy takes "+inst.name+" out", func() bool {
		s, err := r.serverStatus()
		return err == nil && strings.HasPrefix(s[inst.name], "DOWN")
	})
	// Past the drain the listener is closed: the held request is one of
	// the "requests in flight" the stop waits for.
	apitest.Eventually(t, 30*time.Second, inst.name+" stops accepting", func() bool {
		return strings.Contains(inst.proc.output.String()[before:], `"msg":"stopping: no new connections`)
	})
	select {
	case err := <-slow:
		t.Fatalf("the held request ended before the lock went: %v", err)
	default:
	}
	require.NoError(t, tx.Rollback())
	require.NoError(t, <-slow, "the request in flight at the restart is answered")
	<-inst.proc.done
	require.Equal(t, 0, inst.proc.cmd.ProcessState.ExitCode(), inst.proc.output.String()[before:])
	logged := inst.proc.output.String()[before:]
	for _, step := range []string{`"msg":"draining:`, `"msg":"stopping: no new connections`, `"msg":"http server stopped: every request in flight answered"`, `"msg":"stopped"`} {
		assert.Contains(t, logged, step)
	}
	assert.Contains(t, logged, `"component":"shutdown"`)

	r.start(inst)
	r.waitUp(inst)
}

// post sends a POST with the run's token; key, if not empty, is the
// Idempotency-Key.
func (r *rollingRun) post(base, path, body, key string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	token := r.token
	if tokens := r.tokens.Load(); tokens != nil {
		token = (*tokens)[int(r.turn.Add(1))%len(*tokens)]
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, string(out), err
}

// rollingLoad sends store creates through HAProxy from a few clients, each
// one after the other at a steady pace, and keeps every failure.
type rollingLoad struct {
	stopping chan struct{}
	wg       sync.WaitGroup
	sent     atomic.Int64
	created  atomic.Int64
	mu       sync.Mutex
	failures []string
}

func (r *rollingRun) startLoad(clients int) *rollingLoad {
	l := &rollingLoad{stopping: make(chan struct{})}
	for c := range clients {
		l.wg.Go(func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-l.stopping:
					return
				case <-tick.C:
				}
				shop := fmt.Sprintf("rolling-%d-%d", c, i)
				body, _ := json.Marshal(map[string]any{
					"platform": "shopify", "name": "Rolling " + shop, "external_shop_id": shop,
					"credentials": map[string]any{"api_key": "ak", "api_secret": "sk_rolling_secret"},
				})
				l.sent.Add(1)
				status, out, err := r.post("http://"+r.front, "/v1/stores", string(body), uuid.NewString())
				switch {
				case err != nil:
					l.fail(fmt.Sprintf("%s: %v", shop, err))
				case status != http.StatusCreated:
					l.fail(fmt.Sprintf("%s: %d %s", shop, status, firstLine(out)))
				default:
					l.created.Add(1)
				}
			}
		})
	}
	return l
}

func (l *rollingLoad) fail(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures = append(l.failures, s)
}

// stop ends the load once every request sent is answered.
func (l *rollingLoad) stop() (int64, []string) {
	close(l.stopping)
	l.wg.Wait()
	return l.sent.Load(), l.failures
}

func firstLine(s string) string {
	line, _, _ := bufio.NewReader(strings.NewReader(s)).ReadLine()
	return string(line)
}
