package app

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/oncehq/once/domain/limits"
)

// ConfigVar is one environment variable of Config: its name and default
// as the env library reads them from the struct tags (so help cannot
// disagree with what is parsed), and a line of help.
type ConfigVar struct {
	Name    string
	Default string
	Help    string
	// Secret values are masked by `once config`.
	Secret bool
}

// ConfigVars lists Config's variables in the struct's order.
func ConfigVars() []ConfigVar {
	params, err := env.GetFieldParams(&Config{})
	if err != nil {
		panic(err) // the struct tags are wrong: a bug, and DefaultConfig panics too
	}
	vars := make([]ConfigVar, 0, len(params))
	for _, p := range params {
		vars = append(vars, ConfigVar{Name: p.Key, Default: p.DefaultValue, Help: configHelp[p.Key], Secret: secretName.MatchString(p.Key)})
	}
	return vars
}

// secretName matches the variables whose values are secrets, by name, so
// that a new one is masked without anyone remembering to.
var secretName = regexp.MustCompile(`SECRET|PASSWORD|_TOKEN$|_KEYS?$`)

// ConfigValue is a variable's effective value, masked when secret, and
// where it came from.
type ConfigValue struct {
	Name, Value string
	// Source is "environment", "default" (the struct's), or "dev default"
	// (the public secrets of the embedded store).
	Source string
}

// Effective lists c's values with their sources, masked: secrets entirely
// (a list of id:key pairs keeps its ids), and the password of any URL or
// connection string. lookup is os.LookupEnv, or a test's.
func (c Config) Effective(lookup func(string) (string, bool)) []ConfigValue {
	fields := envFields(reflect.ValueOf(c), "")
	vars := ConfigVars()
	values := make([]ConfigValue, 0, len(vars))
	for _, v := range vars {
		value := fmt.Sprint(fields[v.Name].Interface())
		source := "default"
		if _, set := lookup(v.Name); set {
			source = "environment"
		} else if v.Default == "" && value != "" {
			source = "dev default"
		}
		if v.Secret {
			value = maskSecret(value)
		} else {
			value = maskPasswords(value)
		}
		values = append(values, ConfigValue{Name: v.Name, Value: value, Source: source})
	}
	return values
}

// envFields maps each variable to its field in v, following nested
// structs as the env library does (envPrefix).
func envFields(v reflect.Value, prefix string) map[string]reflect.Value {
	fields := map[string]reflect.Value{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("env"), ","); name != "" {
			fields[prefix+name] = v.Field(i)
		} else if f.Type.Kind() == reflect.Struct {
			for k, fv := range envFields(v.Field(i), prefix+f.Tag.Get("envPrefix")) {
				fields[k] = fv
			}
		}
	}
	return fields
}

const mask = "********"

// maskSecret hides a secret; of a list of id:key pairs
// (ONCE_IDEMPOTENCY_SECRETS, ONCE_CREDENTIAL_KEYS) it keeps the ids, which
// say which keys are configured.
func maskSecret(s string) string {
	if s == "" {
		return ""
	}
	items := strings.Split(s, ",")
	for i, item := range items {
		id, _, pair := strings.Cut(item, ":")
		if !pair {
			return mask
		}
		items[i] = id + ":" + mask
	}
	return strings.Join(items, ",")
}

// dsnPassword is the password of a keyword/value connection string
// ("host=db password=s3cret") or of a URL's query (?password=s3cret).
var dsnPassword = regexp.MustCompile(`(?i)(\bpassword=)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// maskPasswords hides the passwords a URL or connection string carries.
func maskPasswords(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), mask)
			s = strings.Replace(u.String(), url.PathEscape(mask), mask, 1)
		}
	}
	return dsnPassword.ReplaceAllString(s, "${1}"+mask)
}

// configHelp is a line of help per variable. A test fails when a variable
// of Config has none, or a line names no variable.
var configHelp = map[string]string{
	"ONCE_HTTP_ADDR":                   "listen address of the API",
	"ONCE_OPS_ADDR":                    "listen address of /metrics, /healthz, /readyz and the console (never the API); empty: the command's own port",
	"ONCE_OPS_PPROF":                   "serve net/http/pprof under /debug/pprof/ on the ops listener",
	"DATABASE_URL":                     "PostgreSQL, as the application role; empty: the embedded in-memory store (data lost on exit)",
	"ONCE_MIGRATE_DATABASE_URL":        "PostgreSQL as the owner role, which `once migrate` applies the migrations as",
	"ONCE_DATABASE_POOLER":             "pgbouncer: DATABASE_URL goes through a pooler in transaction mode (statements without server-side preparation); none: PostgreSQL itself, or a pooler that keeps prepared statements; empty: found out at start (a transaction pooler gets what pgbouncer gives, with a warning)",
	"ONCE_DATABASE_LISTEN_URL":         "PostgreSQL itself, for the Dispatcher's LISTEN connection (never through a transaction pooler); empty: DATABASE_URL",
	"ONCE_JWT_SECRET":                  "HMAC key of the bearer tokens, at least 32 bytes; required with DATABASE_URL",
	"ONCE_JWT_ISSUER":                  "issuer (iss) of the bearer tokens",
	"ONCE_TOKEN_TTL":                   "lifetime of the tokens `once token` issues",
	"ONCE_OPERATOR_TOKEN":              "credential of the operator console, at least 32 bytes; empty: no console",
	"ONCE_IDEMPOTENCY_SECRETS":         "keys of the idempotency fingerprints, id:base64key[,id:base64key...]; required with DATABASE_URL",
	"ONCE_IDEMPOTENCY_RETENTION":       "how long an idempotency key is kept (at least 24h)",
	"ONCE_CREDENTIAL_KEYS":             "AES-256-GCM keys of the stored platform credentials, id:base64-32-bytes[,...]; required with DATABASE_URL",
	"ONCE_MAX_BODY_BYTES":              "largest request body accepted",
	"ONCE_OBJECT_STORE":                "memory or local; empty: memory on the embedded store, local with PostgreSQL",
	"ONCE_OBJECT_STORE_DIR":            "directory of the local object store",
	"ONCE_DB_MAX_CONNS":                "pooled PostgreSQL connections of a process (a Dispatcher holds one more, for LISTEN)",
	"ONCE_DB_MAX_IDLE":                 "idle connections the pool keeps",
	"ONCE_DB_ACQUIRE_TIMEOUT":          "longest wait for a pooled connection, then 503 UNAVAILABLE with Retry-After",
	"ONCE_CLEANUP_INTERVAL":            "how often expired idempotency keys, old outbox events, and expired operations, tasks and dead letters are deleted",
	"ONCE_CLEANUP_BATCH":               "rows deleted per cleanup statement",
	"ONCE_QUEUE":                       "the broker: memory (in-process), redis (Redis Streams), amqp (RabbitMQ) or bullmq (jobs for Node.js workers)",
	"ONCE_ACCEPT_JOB_LOSS":             "true: `once serve` runs on PostgreSQL with ONCE_QUEUE=memory although a crash loses the jobs the process holds (it refuses to start otherwise)",
	"ONCE_REDIS_URL":                   "Redis of ONCE_QUEUE=redis or bullmq: redis:// (one node), redis+sentinel:// or redis+cluster:// (docs/brokers.md)",
	"ONCE_AMQP_URL":                    "RabbitMQ of ONCE_QUEUE=amqp",
	"ONCE_AMQP_QUEUE_TYPE":             "quorum (replicated) or classic, as the queues of an existing deployment were declared",
	"ONCE_AMQP_DELIVERY_LIMIT":         "deliveries of a message to a quorum queue before its dead-letter queue takes it (negative: none)",
	"ONCE_QUEUE_PREFIX":                "prefix of the stream, exchange and queue names",
	"ONCE_BULLMQ_PREFIX":               "key prefix of the BullMQ queues",
	"ONCE_BULLMQ_QUEUES":               "queue of each event type, type=queue,...,*=queue; empty: a queue per event type, named like it",
	"ONCE_BULLMQ_PRIORITIES":           "priority of each event type, type=1..2097151,...",
	"ONCE_BULLMQ_ATTEMPTS":             "attempts of a job by the Node.js workers",
	"ONCE_BULLMQ_BACKOFF":              "first wait of their exponential backoff",
	"ONCE_BULLMQ_KEEP_COMPLETED_AGE":   "completed jobs kept in Redis at most this long (removeOnComplete)",
	"ONCE_BULLMQ_KEEP_COMPLETED_COUNT": "and at most this many",
	"ONCE_BULLMQ_KEEP_FAILED_AGE":      "failed jobs kept in Redis at most this long (removeOnFail)",
	"ONCE_BULLMQ_KEEP_FAILED_COUNT":    "and at most this many",
	"ONCE_DISPATCHER":                  "`once serve` runs a Dispatcher too",
	"ONCE_WORKER":                      "`once serve` runs the workers too",
	"ONCE_INSTANCE_ID":                 "this process's name in outbox leases; empty: host-pid",
	"ONCE_DISPATCH_BATCH":              "events a Dispatcher claims per round",
	"ONCE_DISPATCH_LEASE":              "how long a claimed batch stays a Dispatcher's before another may take it (at least 1s)",
	"ONCE_DISPATCH_MAX_ATTEMPTS":       "publish attempts before an event is dead-lettered",
	"ONCE_DISPATCH_POLL_INTERVAL":      "how often a Dispatcher looks for due events when no notification comes",
	"ONCE_DISPATCH_BACKOFF_BASE":       "first wait before an event's next publish attempt",
	"ONCE_DISPATCH_BACKOFF_MAX":        "longest wait between an event's publish attempts",
	"ONCE_DISPATCH_CONCURRENCY":        "batches a Dispatcher has in flight at once",
	"ONCE_OUTBOX_RETENTION":            "how long dispatched events are kept (at least 1h)",
	"ONCE_OUTBOX_PARTITION_INTERVAL":   "time slice of a partition of dispatched events (PostgreSQL): retention drops whole slices, so events stay up to retention plus one slice (1m to 744h; the same in every process)",
	"ONCE_OPERATION_RETENTION":         "how long a succeeded or failed operation is kept (at least 24h and ONCE_IDEMPOTENCY_RETENTION)",
	"ONCE_TASK_RETENTION":              "how long a finished task (catalog sync, material transfer, failed publication, unbilled AI task) is kept (same minimum)",
	"ONCE_DEAD_LETTER_RETENTION":       "how long a dead letter is kept from the moment it became one (at least 24h, at most ONCE_OPERATION_RETENTION)",
	"ONCE_WORKER_MAX_RETRIES":          "retries of a failing job before it is given up on (a dead letter); waits of 1s doubling to 30s, ±50%: 5 wait about 31s",
	"ONCE_SIM_URL":                     "URL of `once sim`, the platform, AI provider and material source the workers call; empty: in-process simulators",
	"ONCE_SIM_TIMEOUT":                 "bound of each call to them",
	"ONCE_DISPATCH_BREAKER_FAILURES":   "publishes in a row that must find the broker unreachable before a Dispatcher pauses publishing",
	"ONCE_DISPATCH_BREAKER_OPEN":       "wait between probes of a broker found unreachable",
	"ONCE_RELAY":                       "auto, true or false: the process that commits an event publishes it itself, the Dispatchers make up for crashes (auto: on unless ONCE_QUEUE=memory)",
	"ONCE_RELAY_HOLD":                  "how long a committed event stays its writer's before a Dispatcher may deliver it (1s to 1m)",
	"ONCE_REDIS_CLAIM_IDLE":            "how long a Redis message stays pending with a dead consumer before another claims it",
	"ONCE_REDIS_TRIM_INTERVAL":         "how often the Redis streams are trimmed",
	"ONCE_SHUTDOWN_DRAIN":              "on SIGTERM, how long /readyz answers 503 while the API still serves (with Connection: close); longer than the balancer's check interval × fall",
	"ONCE_SHUTDOWN_TIMEOUT":            "then how long requests in flight and jobs get to finish before the process exits anyway",
	"ONCE_LOG_LEVEL":                   "debug, info, warn or error",
	"ONCE_LOG_FORMAT":                  "text or json",
	"ONCE_DEMO":                        "seed a demo workspace and member on the embedded store",
	"ONCE_HTTP_MAX_HEADER_BYTES":       "largest request headers accepted (431 beyond)",
	"ONCE_FETCH_ALLOW_CIDRS":           "address ranges material transfers may fetch from although not public (10.0.0.0/8,...); empty: public addresses only",
	"ONCE_FETCH_ALLOW_HOSTS":           "host names material transfers may fetch from whatever they resolve to (minio.internal,*.corp.example)",
	"ONCE_IDEMPOTENCY_CACHE_SIZE":      "completed idempotent responses kept in memory for replays (0: off)",
	"ONCE_IDEMPOTENCY_CACHE_TTL":       "and for at most this long",
	"ONCE_AUTH_CACHE_SIZE":             "memberships authentication remembers (0: off)",
	"ONCE_AUTH_CACHE_TTL":              "for at most this long: another process sees a member's removal within it",
	"ONCE_RATE_LIMIT":                  "writes each workspace may execute: REQUESTS/UNIT[:BURST] (UNIT s, m or h; BURST defaults to REQUESTS), or off; over it: 429 RATE_LIMITED",
	"ONCE_RATE_LIMIT_WORKSPACES":       "workspaces with a rate of their own: WORKSPACE_ID=RATE,... (RATE as ONCE_RATE_LIMIT, or off)",
	"ONCE_RATE_LIMIT_STORE":            "where the rate is metered: redis (ONCE_REDIS_URL, shared by every process) or process (this one alone); empty: redis with DATABASE_URL, process on the embedded store",
	"ONCE_RATE_LIMIT_TIMEOUT":          "how long a write waits for the rate limiter's Redis (it asks inside the write's transaction); past it, or on an error, the write goes through unmetered",
	"ONCE_WORKSPACE_MAX_CONCURRENCY":   "requests one workspace may have in progress in one process (over it they wait their turn, see ONCE_WORKSPACE_QUEUE_TIMEOUT): a number, off, or auto (half of ONCE_DB_MAX_CONNS with DATABASE_URL, off on the embedded store)",
	"ONCE_WORKSPACE_QUEUE_TIMEOUT":     "how long a request over ONCE_WORKSPACE_MAX_CONCURRENCY waits, first come first served within its workspace and holding no connection, for one of those to finish (0 to 1m; 0: at once); then, or with " + strconv.Itoa(limits.WaitingPerSlot) + " times the cap already waiting, 429 RATE_LIMITED",
}
