// Package apitest starts the whole service (the fx graph the binary runs,
// minus the listener) behind an httptest server, on the memory store or on a
// fresh PostgreSQL database, with a workspace, a member and a token ready.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the secret scan
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/adapters/jwtauth"
	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/domain/workspaces"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/redistest"
	"github.com/oncehq/once/testsupport/testkit"
)

// Test secrets: long enough, and not the public dev ones (PostgreSQL
// refuses those).
const (
	testJWTSecret          = "apitest-jwt-secret-0123456789abcdef0123456789"
	testIdempotencySecrets = "t1:YXBpdGVzdC1pZGVtcG90ZW5jeS1zZWNyZXQtMDEyMzQ1Njc4OQ=="
	testCredentialKeys     = "t1:YXBpdGVzdC1jcmVkZW50aWFscy1rZXktMzItYnl0ZXM="
)

// Server is a running service with one workspace and its admin.
type Server struct {
	URL string
	// OpsURL serves the ops routes (/metrics, /healthz, /readyz, and any
	// other of the "ops_routes" group), as ONCE_OPS_ADDR does.
	OpsURL    string
	Workspace uuid.UUID
	User      uuid.UUID
	Token     string
	// PG is the database when the server runs on PostgreSQL, nil on memory.
	PG     *pgtest.DB
	Logs   *testkit.LogBuffer
	Issuer *jwtauth.Issuer
	WS     *workspaces.Service
	UoW    ports.UnitOfWork
	// Waiters are the reads of this server waiting for an operation's end.
	Waiters *operations.Waiters
	// Sim is the simulated platform the workers call; nil without workers.
	Sim *platformsim.Sim
	// Resolver answers the service's host lookups (material source URLs)
	// instead of DNS: a name not set on it does not exist.
	Resolver *testkit.Resolver

	stop func()
	// streams is where the secret scan reads the queue's messages: the
	// Redis URL and key prefix when the queue is Redis Streams.
	streams struct{ url, prefix string }
}

// Stop stops the service as if its process exited: the API, the Dispatcher
// and the workers stop; the database keeps what was committed.
func (s *Server) Stop() { s.stop() }

// Memory starts the service on the memory adapters.
func Memory(t testing.TB, opts ...fx.Option) *Server {
	return start(t, Config(""), nil, opts...)
}

// Postgres starts the service on a fresh database, as the application role.
func Postgres(t testing.TB, opts ...fx.Option) *Server {
	db := pgtest.New(t)
	return start(t, Config(db.AppDSN), db, opts...)
}

// OnEachStore runs test as a subtest on the memory adapters and on
// PostgreSQL, each with a server of its own.
func OnEachStore(t *testing.T, test func(t *testing.T, s *Server)) {
	t.Helper()
	for name, start := range map[string]func(testing.TB, ...fx.Option) *Server{"memory": Memory, "postgresql": Postgres} {
		t.Run(name, func(t *testing.T) { test(t, start(t)) })
	}
}

// Start starts the service with cfg (Config gives the test defaults). On
// PostgreSQL pass the database too.
func Start(t testing.TB, cfg app.Config, db *pgtest.DB, opts ...fx.Option) *Server {
	return start(t, cfg, db, opts...)
}

// Config is the service configuration the tests use.
func Config(databaseURL string) app.Config {
	cfg := app.DefaultConfig()
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.DatabaseURL = databaseURL
	cfg.JWTSecret = testJWTSecret
	cfg.TokenTTL = time.Hour
	cfg.IdempotencySecrets = testIdempotencySecrets
	cfg.CredentialKeys = testCredentialKeys
	cfg.CleanupInterval = time.Hour
	cfg.CleanupBatch = 100
	cfg.LogLevel = "debug"
	cfg.LogFormat = "json"
	cfg.Demo = false
	cfg.ObjectStore = app.ObjectStoreMemory
	// The background parts are off unless a test asks for them.
	cfg.Dispatcher = false
	cfg.Worker = false
	// Nor the relay (it would publish the events a test's own Dispatchers
	// are to claim); the relay's tests turn it on.
	cfg.Relay = app.RelayOff
	cfg.CleanupInterval = time.Hour
	cfg.QueuePrefix = "once-test-" + uuid.NewString()[:8] + "."
	// The tests check behaviour, not capacity: on a loaded machine a burst
	// may wait a while for the pool, and must not get a 503 for it. The
	// pool's own tests set the limits they exercise.
	cfg.DBAcquireTimeout = 30 * time.Second
	// Nor the workspaces' limits: a test of behaviour sends bursts into one
	// workspace. The tests of the limits set them.
	cfg.RateLimit = "off"
	cfg.WorkspaceMaxConcurrency = "off"
	return cfg
}

func start(t testing.TB, cfg app.Config, db *pgtest.DB, opts ...fx.Option) *Server {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test configuration: %v", err)
	}
	// With bullmq, once's own jobs are on Redis Streams too.
	onStreams := cfg.Queue == app.QueueRedis || cfg.Queue == app.QueueBullMQ
	if onStreams {
		// Registered first, so it runs after the service has stopped.
		redistest.DeleteKeysLater(t, cfg.RedisURL, cfg.QueuePrefix)
	}
	logs := &testkit.LogBuffer{}
	log := slog.New(app.WithRequestContext(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	s := &Server{PG: db, Logs: logs, Workspace: uuid.New(), User: uuid.New(), Resolver: testkit.NewResolver()}
	var deps httpapi.Deps
	var tracing app.Tracing
	var metrics *prometheus.Metrics
	var ops *app.OpsMux
	var handlers app.Handlers
	optional := func(in struct {
		fx.In
		Sim      *platformsim.Sim `optional:"true"`
		Handlers app.Handlers     `optional:"true"`
	}) {
		s.Sim, handlers = in.Sim, in.Handlers
	}
	fxApp := fx.New(append([]fx.Option{app.Base(cfg, log), app.LimitsModule, app.Background(cfg),
		fx.Decorate(func(ports.HostResolver) ports.HostResolver { return s.Resolver }),
		fx.Populate(&deps, &tracing, &metrics, &ops, &s.Issuer, &s.WS, &s.UoW, &s.Waiters), fx.Invoke(optional)}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fxApp.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	mux := http.NewServeMux()
	httpapi.NewAPI(mux, deps)
	ts := httptest.NewServer(httpapi.Handler(mux, log, metrics, httpapi.WithTracerProvider(tracing.Provider)))
	opsServer := httptest.NewServer(ops)
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			ts.Close()
			opsServer.Close()
			_ = fxApp.Stop(context.Background())
		})
	}
	// The topics to delete are read before the service stops (the event
	// types it published) and deleted after (nothing declares them again).
	var topics []string
	if cfg.Queue == app.QueueAMQP {
		t.Cleanup(func() { deleteAMQPTopics(t, cfg.AMQPURL, topics) })
	}
	t.Cleanup(s.Stop)
	if cfg.Queue == app.QueueAMQP {
		t.Cleanup(func() { topics = s.amqpTopics(t, cfg.QueuePrefix, handlers) })
	}
	// Runs before Stop (cleanups run last first), on everything the test
	// made this server do.
	if onStreams {
		s.streams.url, s.streams.prefix = cfg.RedisURL, cfg.QueuePrefix
	}
	t.Cleanup(func() { s.checkNoSecrets(t) })
	s.URL, s.OpsURL = ts.URL, opsServer.URL

	if _, err := s.WS.Create(ctx, s.Workspace, "test workspace", s.User); err != nil {
		t.Fatalf("create workspace: %v", err)
	}
	s.Token = s.TokenFor(t, s.Workspace, s.User)
	return s
}

// Metrics scrapes the ops listener's /metrics.
func (s *Server) Metrics(t testing.TB) string {
	t.Helper()
	res, err := http.Get(s.OpsURL + "/metrics")
	if err != nil {
		t.Fatalf("scrape metrics: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("scrape metrics: %d %v", res.StatusCode, err)
	}
	return string(body)
}

// TokenFor signs a token for any workspace and user.
func (s *Server) TokenFor(t testing.TB, ws, user uuid.UUID) string {
	t.Helper()
	token, err := s.Issuer.Issue(ws, user)
	if err != nil {
		t.Fatalf("issue token: %v", err)
	}
	return token
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Problem is the problem+json body of an error.
type Problem struct {
	Status       int    `json:"status"`
	Code         string `json:"code"`
	Detail       string `json:"detail"`
	RetrySameKey bool   `json:"retry_same_key"`
	Errors       []struct {
		Location string `json:"location"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// Locations lists where the problem's details point (body.name, ...).
func (p Problem) Locations() []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Location)
	}
	return out
}

// Problem decodes the body as a problem document.
func (r Response) Problem(t testing.TB) Problem {
	t.Helper()
	var p Problem
	r.JSON(t, &p)
	return p
}

// Do sends a request with the server's token; headers may add or override
// (an empty value removes one).
func (s *Server) Do(t testing.TB, method, path string, body any, headers map[string]string) Response {
	t.Helper()
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		reader = bytes.NewReader(b)
	case string:
		reader = bytes.NewReader([]byte(b))
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.URL+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return send(t, req)
}

// Send sends req with the server's token unless it carries an Authorization
// header: for requests Do cannot make (a header sent twice).
func (s *Server) Send(t testing.TB, req *http.Request) Response {
	t.Helper()
	if _, ok := req.Header["Authorization"]; !ok {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	return send(t, req)
}

func send(t testing.TB, req *http.Request) Response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}
