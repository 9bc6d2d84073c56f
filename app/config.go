// Package app assembles once with fx: configuration, the adapter modules
// chosen from it, and the lifecycle of the servers and background jobs.
package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/retention"
	"github.com/oncehq/once/domain/workspaces"
)

// Dev secrets make the embedded default run with no setup. They are public
// (they are in this file), so they are refused with PostgreSQL.
const (
	DevJWTSecret          = "once-dev-jwt-secret-do-not-use-in-production-0001"
	DevIdempotencySecrets = "dev:b25jZS1kZXYtaWRlbXBvdGVuY3ktc2VjcmV0LWtleS0wMDAx"
	DevCredentialKeys     = "dev:b25jZS1kZXYtY3JlZGVudGlhbHMta2V5LTMyYnl0ZXM="
)

// Config is read from the environment. Every field is documented in the
// table of docs/configuration.md.
type Config struct {
	HTTPAddr string `env:"ONCE_HTTP_ADDR" envDefault:"127.0.0.1:8080"`
	// OpsAddr is the ops listener (metrics, health, console), never the
	// public API. Empty takes the command's default (DefaultOpsAddr), one
	// port per command so that serve, dispatch and work share a host.
	OpsAddr string `env:"ONCE_OPS_ADDR"`
	// OpsPprof serves net/http/pprof under /debug/pprof/ on the ops
	// listener (for `once-bench http --profile-dir`); off by default.
	OpsPprof bool `env:"ONCE_OPS_PPROF" envDefault:"false"`
	// DatabaseURL selects PostgreSQL; empty means the embedded memory store.
	DatabaseURL string `env:"DATABASE_URL"`
	// MigrateDatabaseURL is the owner role `once migrate` connects as.
	MigrateDatabaseURL string `env:"ONCE_MIGRATE_DATABASE_URL"`
	// DatabasePooler says what DatabaseURL reaches: pgbouncer for a pooler
	// in transaction mode, which needs statements without server-side
	// preparation (docs/deploy.md); none for PostgreSQL itself, or a
	// pooler that keeps prepared statements (PgBouncer 1.21+ with
	// max_prepared_statements, or any pooler in session mode); empty: found
	// out at start, a transaction pooler then treated as pgbouncer
	// (findPooler).
	DatabasePooler string `env:"ONCE_DATABASE_POOLER"`
	// DatabaseListenURL is the connection a Dispatcher LISTENs on for
	// wake-ups, which must reach PostgreSQL itself (LISTEN holds a
	// session); empty means DatabaseURL.
	DatabaseListenURL string `env:"ONCE_DATABASE_LISTEN_URL"`

	JWTSecret string        `env:"ONCE_JWT_SECRET"`
	JWTIssuer string        `env:"ONCE_JWT_ISSUER" envDefault:"once"`
	TokenTTL  time.Duration `env:"ONCE_TOKEN_TTL" envDefault:"24h"`

	// OperatorToken is the operator console's credential (not a tenant
	// token); empty turns the console off.
	OperatorToken string `env:"ONCE_OPERATOR_TOKEN"`

	IdempotencySecrets   string        `env:"ONCE_IDEMPOTENCY_SECRETS"`
	IdempotencyRetention time.Duration `env:"ONCE_IDEMPOTENCY_RETENTION" envDefault:"48h"`
	CredentialKeys       string        `env:"ONCE_CREDENTIAL_KEYS"`
	MaxBodyBytes         int64         `env:"ONCE_MAX_BODY_BYTES" envDefault:"262144"`

	// ObjectStore is memory or local; empty picks memory on the embedded
	// store and local with PostgreSQL.
	ObjectStore    string `env:"ONCE_OBJECT_STORE"`
	ObjectStoreDir string `env:"ONCE_OBJECT_STORE_DIR" envDefault:"var/objects"`

	// Database pool, in every process (serve, dispatch, work and the CLI
	// commands): at most DBMaxConns pooled connections, plus one LISTEN
	// connection in a process that runs a Dispatcher. A transaction waits
	// at most DBAcquireTimeout for a free one, then gets 503 UNAVAILABLE
	// with Retry-After.
	DBMaxConns       int           `env:"ONCE_DB_MAX_CONNS" envDefault:"10"`
	DBMaxIdle        int           `env:"ONCE_DB_MAX_IDLE" envDefault:"10"`
	DBAcquireTimeout time.Duration `env:"ONCE_DB_ACQUIRE_TIMEOUT" envDefault:"1s"`

	CleanupInterval time.Duration `env:"ONCE_CLEANUP_INTERVAL" envDefault:"1m"`
	CleanupBatch    int           `env:"ONCE_CLEANUP_BATCH" envDefault:"500"`

	// Queue selects the broker: memory (in-process, the embedded default),
	// redis (Redis Streams), amqp (RabbitMQ) or bullmq (BullMQ jobs in
	// Redis, for Node.js workers).
	Queue string `env:"ONCE_QUEUE" envDefault:"memory"`
	// AcceptJobLoss lets `once serve` run on PostgreSQL with the memory
	// queue, which loses the jobs it holds when the process dies (see
	// JobLoss).
	AcceptJobLoss bool `env:"ONCE_ACCEPT_JOB_LOSS" envDefault:"false"`
	// RedisURL names a single Redis, a Sentinel-managed primary
	// (redis+sentinel://) or a Redis Cluster (redis+cluster://, or
	// redis://host:port?addr=host:port&...); see docs/brokers.md.
	RedisURL    string `env:"ONCE_REDIS_URL" envDefault:"redis://127.0.0.1:6379/0"`
	AMQPURL     string `env:"ONCE_AMQP_URL" envDefault:"amqp://guest:guest@127.0.0.1:5672/"`
	QueuePrefix string `env:"ONCE_QUEUE_PREFIX" envDefault:"once."`
	// RabbitMQ's queues: quorum (replicated) or classic, as the queues of
	// an existing deployment were declared; a quorum queue's delivery
	// limit before a message goes to its dead-letter queue (negative:
	// none).
	AMQPQueueType     string `env:"ONCE_AMQP_QUEUE_TYPE" envDefault:"quorum"`
	AMQPDeliveryLimit int    `env:"ONCE_AMQP_DELIVERY_LIMIT" envDefault:"20"`

	// BullMQ (ONCE_QUEUE=bullmq): jobs in the Redis at ONCE_REDIS_URL for
	// Node.js BullMQ workers. Queues is the event type -> queue mapping
	// ("type=queue,...,*=queue"; by default a queue per event type, named
	// like it), Priorities "type=1..2097151,...". Attempts and Backoff
	// (exponential) are the Node.js side's retries; the Keep settings bound
	// the finished jobs kept in Redis (removeOnComplete / removeOnFail).
	BullMQPrefix             string        `env:"ONCE_BULLMQ_PREFIX" envDefault:"bull"`
	BullMQQueues             string        `env:"ONCE_BULLMQ_QUEUES"`
	BullMQPriorities         string        `env:"ONCE_BULLMQ_PRIORITIES"`
	BullMQAttempts           int           `env:"ONCE_BULLMQ_ATTEMPTS" envDefault:"6"`
	BullMQBackoff            time.Duration `env:"ONCE_BULLMQ_BACKOFF" envDefault:"1s"`
	BullMQKeepCompletedAge   time.Duration `env:"ONCE_BULLMQ_KEEP_COMPLETED_AGE" envDefault:"1h"`
	BullMQKeepCompletedCount int           `env:"ONCE_BULLMQ_KEEP_COMPLETED_COUNT" envDefault:"10000"`
	BullMQKeepFailedAge      time.Duration `env:"ONCE_BULLMQ_KEEP_FAILED_AGE" envDefault:"168h"`
	BullMQKeepFailedCount    int           `env:"ONCE_BULLMQ_KEEP_FAILED_COUNT" envDefault:"10000"`

	// Dispatcher and Worker say whether `once serve` also runs them.
	Dispatcher bool   `env:"ONCE_DISPATCHER" envDefault:"true"`
	Worker     bool   `env:"ONCE_WORKER" envDefault:"true"`
	InstanceID string `env:"ONCE_INSTANCE_ID"`

	DispatchBatch        int           `env:"ONCE_DISPATCH_BATCH" envDefault:"100"`
	DispatchLease        time.Duration `env:"ONCE_DISPATCH_LEASE" envDefault:"30s"`
	DispatchMaxAttempts  int           `env:"ONCE_DISPATCH_MAX_ATTEMPTS" envDefault:"10"`
	DispatchPollInterval time.Duration `env:"ONCE_DISPATCH_POLL_INTERVAL" envDefault:"1s"`
	DispatchBackoffBase  time.Duration `env:"ONCE_DISPATCH_BACKOFF_BASE" envDefault:"1s"`
	DispatchBackoffMax   time.Duration `env:"ONCE_DISPATCH_BACKOFF_MAX" envDefault:"10m"`
	// DispatchConcurrency is how many batches a Dispatcher has in flight
	// at once (claim, publish and mark of different batches overlap).
	DispatchConcurrency int           `env:"ONCE_DISPATCH_CONCURRENCY" envDefault:"4"`
	OutboxRetention     time.Duration `env:"ONCE_OUTBOX_RETENTION" envDefault:"168h"`
	// OutboxPartitionInterval is the time slice of a partition of
	// dispatched events (PostgreSQL), what retention drops at once.
	OutboxPartitionInterval time.Duration `env:"ONCE_OUTBOX_PARTITION_INTERVAL" envDefault:"24h"`
	// Retention of finished records (domain/retention): succeeded or
	// failed operations, finished tasks, dead letters (from the moment
	// they became one). The maintenance of every process removes them.
	OperationRetention  time.Duration `env:"ONCE_OPERATION_RETENTION" envDefault:"720h"`
	TaskRetention       time.Duration `env:"ONCE_TASK_RETENTION" envDefault:"720h"`
	DeadLetterRetention time.Duration `env:"ONCE_DEAD_LETTER_RETENTION" envDefault:"336h"`
	WorkerMaxRetries    int           `env:"ONCE_WORKER_MAX_RETRIES" envDefault:"5"`

	// External systems over HTTP (issue 8): the URL of `once sim` (or
	// anything speaking its API) the workers call for the platform, the AI
	// provider and the material source; empty means the in-process
	// simulators. SimTimeout bounds each call.
	SimURL     string        `env:"ONCE_SIM_URL"`
	SimTimeout time.Duration `env:"ONCE_SIM_TIMEOUT" envDefault:"10s"`

	// Broker outages and storage: the Dispatcher's circuit breaker (how
	// many publishes in a row must find the broker unreachable before it
	// stops publishing as a whole, and how long it then waits between
	// probes); how long a Redis message stays pending with a dead consumer
	// before another claims it; how often Redis streams are trimmed.
	DispatchBreakerFailures int           `env:"ONCE_DISPATCH_BREAKER_FAILURES" envDefault:"3"`
	DispatchBreakerOpen     time.Duration `env:"ONCE_DISPATCH_BREAKER_OPEN" envDefault:"5s"`
	// Relay: the process that commits an event publishes it itself
	// (dispatch.Relay); auto is on with a real queue. RelayHold is how
	// long its events stay its own before the Dispatchers may deliver
	// them.
	Relay             string        `env:"ONCE_RELAY" envDefault:"auto"`
	RelayHold         time.Duration `env:"ONCE_RELAY_HOLD" envDefault:"5s"`
	RedisClaimIdle    time.Duration `env:"ONCE_REDIS_CLAIM_IDLE" envDefault:"60s"`
	RedisTrimInterval time.Duration `env:"ONCE_REDIS_TRIM_INTERVAL" envDefault:"1m"`

	// Rolling restarts (docs/deploy.md): on SIGTERM /readyz answers 503
	// and the API keeps serving for ShutdownDrain (longer than the
	// balancer's health check takes to see it: interval × fall); then the
	// process stops within ShutdownTimeout, requests in flight and jobs
	// finished or handed back.
	ShutdownDrain   time.Duration `env:"ONCE_SHUTDOWN_DRAIN" envDefault:"5s"`
	ShutdownTimeout time.Duration `env:"ONCE_SHUTDOWN_TIMEOUT" envDefault:"30s"`

	LogLevel  string `env:"ONCE_LOG_LEVEL" envDefault:"info"`
	LogFormat string `env:"ONCE_LOG_FORMAT" envDefault:"text"`

	// Demo seeds a demo workspace and member on the embedded store so that
	// `make run` has something to call.
	Demo bool `env:"ONCE_DEMO" envDefault:"true"`

	// Hostile input: the header cap (larger request headers get 431), and
	// the allow-lists of the fetch policy (domain/fetchpolicy) that open
	// private ranges and hosts to material transfers, for tests and private
	// deployments.
	HTTPMaxHeaderBytes int    `env:"ONCE_HTTP_MAX_HEADER_BYTES" envDefault:"32768"`
	FetchAllowCIDRs    string `env:"ONCE_FETCH_ALLOW_CIDRS"`
	FetchAllowHosts    string `env:"ONCE_FETCH_ALLOW_HOSTS"`
	// Retry storms (issue 7, item 2): completed idempotent responses kept
	// in memory (entries, age; 0 disables) so retries of a finished request
	// cost no database work, and the membership check of authentication
	// remembered for AuthCacheTTL (another process sees a removal within
	// it; this one at once).
	IdempotencyCacheSize int           `env:"ONCE_IDEMPOTENCY_CACHE_SIZE" envDefault:"10000"`
	IdempotencyCacheTTL  time.Duration `env:"ONCE_IDEMPOTENCY_CACHE_TTL" envDefault:"5m"`
	AuthCacheSize        int           `env:"ONCE_AUTH_CACHE_SIZE" envDefault:"10000"`
	AuthCacheTTL         time.Duration `env:"ONCE_AUTH_CACHE_TTL" envDefault:"5s"`

	// Per-workspace limits (issue 23, app/limits.go): the rate of writes
	// each workspace may execute (REQUESTS/UNIT[:BURST], or off), the
	// workspaces that have another (ID=RATE,...), where the rate is
	// metered (redis: shared by every process; process: this one alone;
	// empty: redis with DATABASE_URL, process on the embedded store), and
	// the units of work one workspace may have in flight in one process
	// (auto: half of ONCE_DB_MAX_CONNS with DATABASE_URL, none on the
	// embedded store; off; or a number), and how long one over that cap
	// waits its turn before it is refused (0: refused at once).
	RateLimit           string `env:"ONCE_RATE_LIMIT" envDefault:"100/s:200"`
	RateLimitWorkspaces string `env:"ONCE_RATE_LIMIT_WORKSPACES"`
	RateLimitStore      string `env:"ONCE_RATE_LIMIT_STORE"`
	// RateLimitTimeout bounds one question to the rate limiter's Redis;
	// past it the write goes through unmetered.
	RateLimitTimeout        time.Duration `env:"ONCE_RATE_LIMIT_TIMEOUT" envDefault:"100ms"`
	WorkspaceMaxConcurrency string        `env:"ONCE_WORKSPACE_MAX_CONCURRENCY" envDefault:"auto"`
	WorkspaceQueueTimeout   time.Duration `env:"ONCE_WORKSPACE_QUEUE_TIMEOUT" envDefault:"5s"`
}

// Queues.
const (
	QueueMemory = "memory"
	QueueRedis  = "redis"
	QueueAMQP   = "amqp"
	QueueBullMQ = "bullmq"
)

// Poolers in front of PostgreSQL (ONCE_DATABASE_POOLER).
const (
	PoolerNone      = "none"
	PoolerPgBouncer = "pgbouncer"
)

// TransactionPooler says whether DatabaseURL reaches PostgreSQL through a
// pooler in transaction mode.
func (c Config) TransactionPooler() bool { return c.DatabasePooler == PoolerPgBouncer }

// ListenURL is the connection a Dispatcher LISTENs on.
func (c Config) ListenURL() string {
	if c.DatabaseListenURL != "" {
		return c.DatabaseListenURL
	}
	return c.DatabaseURL
}

// Object stores.
const (
	ObjectStoreMemory = "memory"
	ObjectStoreLocal  = "local"
)

func (c Config) objectStore() string {
	return c.orByStorage(c.ObjectStore, ObjectStoreMemory, ObjectStoreLocal)
}

// orByStorage is set, or, when it is empty, the choice of the storage in
// use: embedded on the embedded store, postgres with DATABASE_URL.
func (c Config) orByStorage(set, embedded, postgres string) string {
	switch {
	case set != "":
		return set
	case c.Embedded():
		return embedded
	default:
		return postgres
	}
}

// Owner names this process in outbox leases (locked_by).
func (c Config) Owner() string {
	if c.InstanceID != "" {
		return c.InstanceID
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// Demo identities seeded on the embedded store.
const (
	DemoWorkspaceID = "00000000-0000-4000-8000-000000000001"
	DemoUserID      = "00000000-0000-4000-8000-0000000000aa"
)

// Embedded reports whether the service runs on the memory adapters.
func (c Config) Embedded() bool { return c.DatabaseURL == "" }

// LoadConfig reads the environment, fills the dev defaults on the embedded
// store, and validates.
func LoadConfig() (Config, error) {
	c, err := ReadConfig()
	if err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// ReadConfig is LoadConfig without the validation, for `once config`,
// which shows an invalid configuration too.
func ReadConfig() (Config, error) {
	c, err := env.ParseAs[Config]()
	if err != nil {
		return Config{}, fmt.Errorf("configuration: %w", explainEnvError(err))
	}
	c.applyDevDefaults()
	return c, nil
}

func (c *Config) applyDevDefaults() {
	if !c.Embedded() {
		return
	}
	if c.JWTSecret == "" {
		c.JWTSecret = DevJWTSecret
	}
	if c.IdempotencySecrets == "" {
		c.IdempotencySecrets = DevIdempotencySecrets
	}
	if c.CredentialKeys == "" {
		c.CredentialKeys = DevCredentialKeys
	}
}

// DefaultConfig is the configuration of an empty environment, before the dev
// defaults: what tests start from.
func DefaultConfig() Config {
	c, err := env.ParseAsWithOptions[Config](env.Options{Environment: map[string]string{}})
	if err != nil {
		panic(err) // the defaults in the struct tags are wrong: a bug
	}
	return c
}

// Validate says everything that is wrong at once, naming the variables.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.IdempotencyRetention < idempotency.MinRetention {
		bad("ONCE_IDEMPOTENCY_RETENTION=%s is below the minimum of %s: clients may retry for a day", c.IdempotencyRetention, idempotency.MinRetention)
	}
	if len(c.JWTSecret) < 32 {
		bad("ONCE_JWT_SECRET must be at least 32 bytes")
	}
	if c.IdempotencySecrets == "" {
		bad("ONCE_IDEMPOTENCY_SECRETS is required with DATABASE_URL (format id:base64key[,id:base64key...])")
	} else if _, err := idempotency.ParseSecrets(c.IdempotencySecrets); err != nil {
		bad("ONCE_IDEMPOTENCY_SECRETS: %v", err)
	}
	if c.CredentialKeys == "" {
		bad("ONCE_CREDENTIAL_KEYS is required with DATABASE_URL (format id:base64-32-bytes[,...])")
	} else if _, err := aesgcm.ParseKeys(c.CredentialKeys); err != nil {
		bad("ONCE_CREDENTIAL_KEYS: %v", err)
	}
	if !c.Embedded() {
		if c.JWTSecret == DevJWTSecret || c.IdempotencySecrets == DevIdempotencySecrets || c.CredentialKeys == DevCredentialKeys {
			bad("the public dev secrets cannot be used with DATABASE_URL; set ONCE_JWT_SECRET, ONCE_IDEMPOTENCY_SECRETS and ONCE_CREDENTIAL_KEYS")
		}
	}
	switch c.DatabasePooler {
	case "", PoolerNone, PoolerPgBouncer:
	default:
		bad("ONCE_DATABASE_POOLER=%q must be empty, none or pgbouncer (a pooler in transaction mode)", c.DatabasePooler)
	}
	if c.Embedded() && (c.DatabasePooler != "" || c.DatabaseListenURL != "") {
		bad("ONCE_DATABASE_POOLER and ONCE_DATABASE_LISTEN_URL need DATABASE_URL")
	}
	if c.MaxBodyBytes < 1024 {
		bad("ONCE_MAX_BODY_BYTES=%d is too small (minimum 1024)", c.MaxBodyBytes)
	}
	if c.DBMaxConns < 1 || c.DBMaxConns > 1000 {
		bad("ONCE_DB_MAX_CONNS=%d must be between 1 and 1000 (and fit, with every other process, in PostgreSQL's max_connections)", c.DBMaxConns)
	}
	if c.DBMaxIdle < 0 || c.DBMaxIdle > c.DBMaxConns {
		bad("ONCE_DB_MAX_IDLE=%d must be between 0 and ONCE_DB_MAX_CONNS (%d)", c.DBMaxIdle, c.DBMaxConns)
	}
	if c.DBAcquireTimeout <= 0 || c.DBAcquireTimeout > time.Minute {
		bad("ONCE_DB_ACQUIRE_TIMEOUT=%s must be positive and at most 1m: a request waits that long for a connection", c.DBAcquireTimeout)
	}
	if c.CleanupInterval <= 0 {
		bad("ONCE_CLEANUP_INTERVAL must be positive")
	}
	if c.CleanupBatch <= 0 || c.CleanupBatch > 100000 {
		bad("ONCE_CLEANUP_BATCH must be between 1 and 100000")
	}
	if c.TokenTTL <= 0 {
		bad("ONCE_TOKEN_TTL must be positive")
	}
	if c.OperatorToken != "" && (len(c.OperatorToken) < 32 || c.OperatorToken == c.JWTSecret) {
		bad("ONCE_OPERATOR_TOKEN must be at least 32 bytes and differ from ONCE_JWT_SECRET (or be empty: no operator console)")
	}
	switch c.objectStore() {
	case ObjectStoreMemory, ObjectStoreLocal:
	default:
		bad("ONCE_OBJECT_STORE=%q must be memory or local", c.ObjectStore)
	}
	if c.objectStore() == ObjectStoreLocal && c.ObjectStoreDir == "" {
		bad("ONCE_OBJECT_STORE_DIR is required with ONCE_OBJECT_STORE=local")
	}
	switch c.Queue {
	case QueueMemory, QueueRedis, QueueAMQP:
	case QueueBullMQ:
		errs = append(errs, c.validateBullMQ()...)
	default:
		bad("ONCE_QUEUE=%q must be memory, redis, amqp or bullmq", c.Queue)
	}
	errs = append(errs, c.validateBrokers()...)
	if c.DispatchBatch < 1 || c.DispatchBatch > 10000 {
		bad("ONCE_DISPATCH_BATCH must be between 1 and 10000")
	}
	if c.DispatchConcurrency < 1 || c.DispatchConcurrency > 64 {
		bad("ONCE_DISPATCH_CONCURRENCY must be between 1 and 64")
	}
	if c.DispatchLease < time.Second {
		bad("ONCE_DISPATCH_LEASE must be at least 1s: a lease shorter than a publish re-delivers everything")
	}
	if c.DispatchMaxAttempts < 1 {
		bad("ONCE_DISPATCH_MAX_ATTEMPTS must be at least 1")
	}
	if c.DispatchPollInterval <= 0 || c.DispatchBackoffBase <= 0 || c.DispatchBackoffMax < c.DispatchBackoffBase {
		bad("ONCE_DISPATCH_POLL_INTERVAL and ONCE_DISPATCH_BACKOFF_BASE must be positive, ONCE_DISPATCH_BACKOFF_MAX at least the base")
	}
	if c.OutboxRetention < time.Hour {
		bad("ONCE_OUTBOX_RETENTION must be at least 1h: dispatched events are kept for troubleshooting")
	}
	if c.OutboxPartitionInterval < time.Minute || c.OutboxPartitionInterval > 31*24*time.Hour {
		bad("ONCE_OUTBOX_PARTITION_INTERVAL must be between 1m and 744h")
	}
	if err := c.RetentionPolicy().Validate(c.IdempotencyRetention); err != nil {
		errs = append(errs, err)
	}
	if c.WorkerMaxRetries < 0 {
		bad("ONCE_WORKER_MAX_RETRIES must not be negative")
	}
	if c.SimTimeout <= 0 {
		bad("ONCE_SIM_TIMEOUT must be positive")
	} else if c.SimURL != "" {
		if _, err := simhttp.NewClient(simhttp.ClientConfig{URL: c.SimURL, Timeout: c.SimTimeout}); err != nil {
			bad("ONCE_SIM_URL: %v", err)
		}
	}
	if c.DispatchBreakerFailures < 1 {
		bad("ONCE_DISPATCH_BREAKER_FAILURES must be at least 1")
	}
	if c.DispatchBreakerOpen < 10*time.Millisecond || c.DispatchBreakerOpen > 10*time.Minute {
		bad("ONCE_DISPATCH_BREAKER_OPEN must be between 10ms and 10m: events wait that long after the broker is back")
	}
	if c.Relay != RelayAuto && c.Relay != RelayOn && c.Relay != RelayOff {
		bad("ONCE_RELAY=%q must be auto, true or false", c.Relay)
	}
	if c.RelayHold < time.Second || c.RelayHold > time.Minute {
		bad("ONCE_RELAY_HOLD must be between 1s and 1m: longer than a publish and a mark, short enough that a crashed writer's events are not late for long")
	}
	if c.RedisClaimIdle < time.Second {
		bad("ONCE_REDIS_CLAIM_IDLE must be at least 1s, and longer than the slowest job, retries included (or it runs twice)")
	}
	if c.RedisTrimInterval < time.Second {
		bad("ONCE_REDIS_TRIM_INTERVAL must be at least 1s")
	}
	if c.ShutdownDrain < 0 || c.ShutdownDrain > 5*time.Minute {
		bad("ONCE_SHUTDOWN_DRAIN=%s must be between 0 (no drain) and 5m: longer than the balancer's health check needs to take the instance out", c.ShutdownDrain)
	}
	if c.ShutdownTimeout < time.Second || c.ShutdownTimeout > time.Hour {
		bad("ONCE_SHUTDOWN_TIMEOUT=%s must be between 1s and 1h: requests in flight and jobs get that long to finish", c.ShutdownTimeout)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		bad("ONCE_LOG_LEVEL: %v", err)
	}
	if c.OpsAddr != "" {
		if _, _, err := net.SplitHostPort(c.OpsAddr); err != nil {
			bad("ONCE_OPS_ADDR=%q must be host:port (such as 127.0.0.1:9180)", c.OpsAddr)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("ONCE_LOG_FORMAT must be text or json")
	}
	if c.IdempotencyCacheSize < 0 || c.IdempotencyCacheSize > 1_000_000 {
		bad("ONCE_IDEMPOTENCY_CACHE_SIZE=%d must be between 0 (off) and 1000000", c.IdempotencyCacheSize)
	}
	if c.IdempotencyCacheTTL < 0 || c.IdempotencyCacheTTL > idempotency.MaxCacheTTL {
		bad("ONCE_IDEMPOTENCY_CACHE_TTL=%s must be between 0 (off) and %s", c.IdempotencyCacheTTL, idempotency.MaxCacheTTL)
	}
	if c.AuthCacheSize < 0 || c.AuthCacheSize > 1_000_000 {
		bad("ONCE_AUTH_CACHE_SIZE=%d must be between 0 (off) and 1000000", c.AuthCacheSize)
	}
	if c.AuthCacheTTL < 0 || c.AuthCacheTTL > workspaces.MaxMembershipCacheTTL {
		bad("ONCE_AUTH_CACHE_TTL=%s must be between 0 (off) and %s: a member removed through another process keeps access that long", c.AuthCacheTTL, workspaces.MaxMembershipCacheTTL)
	}
	if c.HTTPMaxHeaderBytes < 4096 || c.HTTPMaxHeaderBytes > 1<<20 {
		bad("ONCE_HTTP_MAX_HEADER_BYTES=%d must be between 4096 and 1048576", c.HTTPMaxHeaderBytes)
	}
	if _, err := c.fetchPolicy(); err != nil {
		bad("ONCE_FETCH_ALLOW_CIDRS / ONCE_FETCH_ALLOW_HOSTS: %v", err)
	}
	errs = append(errs, c.validateLimits()...)
	return errors.Join(errs...)
}

// RetentionPolicy is how long finished operations, tasks and dead letters
// are kept.
func (c Config) RetentionPolicy() retention.Policy {
	return retention.Policy{Operations: c.OperationRetention, Tasks: c.TaskRetention, DeadLetters: c.DeadLetterRetention}
}

func (c Config) fetchPolicy() (fetchpolicy.Policy, error) {
	return fetchpolicy.Parse(c.FetchAllowCIDRs, c.FetchAllowHosts)
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(strings.ToUpper(s)))
	return l, err
}
