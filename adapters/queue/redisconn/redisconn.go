// Package redisconn connects the queue adapters on Redis (redisstream and
// bullmq) to the Redis one URL names, in the three topologies teams run:
//
//	single node  redis://[user:password@]host:port[/db][?option=value...]
//	             (rediss:// for TLS; go-redis's ParseURL options)
//	Sentinel     redis+sentinel://[user:password@]host:port[/db]?master_name=name
//	             [&addr=host:port...][&sentinel_username=u&sentinel_password=p]
//	             (rediss+sentinel:// for TLS): the Sentinels, and the master
//	             they name; the user and password are the data nodes'
//	Cluster      redis+cluster://[user:password@]host:port[?addr=host:port...]
//	             or redis://host:port?addr=host:port[&addr=...] (go-redis's
//	             ParseClusterURL): seeds of the cluster; the client learns
//	             the rest from them
//
// Every client is a redis.UniversalClient, so the Streams publisher and
// subscriber, the trimmer and BullMQ run unchanged on each.
//
// It also tells Redis's answers apart (Classify): those by which Redis
// refuses everything for a while (Unavailable: loading, out of memory, a
// failover under way) and those by which it says it is set up otherwise
// than the URL claims (Misconfigured: MOVED or ASK from a Cluster node
// reached as a single node, CROSSSLOT, refused credentials, ...). Neither
// is the fault of the messages being published.
package redisconn

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncehq/once/domain"
)

// Topology is the shape of the Redis a URL names.
type Topology string

// Topologies.
const (
	Single   Topology = "single"
	Sentinel Topology = "sentinel"
	Cluster  Topology = "cluster"
)

// DefaultDialTimeout bounds connecting when neither Config nor the URL says.
const DefaultDialTimeout = 5 * time.Second

// Config is how to reach Redis.
type Config struct {
	// URL names the Redis and its topology (see the package comment). A
	// dial_timeout in the URL wins over DialTimeout.
	URL string
	// DialTimeout bounds connecting (default DefaultDialTimeout), so an
	// unreachable Redis fails promptly.
	DialTimeout time.Duration
	// FollowContext ends every call with its context: the socket deadlines
	// come from it (go-redis ContextTimeoutEnabled), so a Redis that hangs
	// ends the call at the caller's deadline and the connection that timed
	// out is discarded.
	FollowContext bool
	// Tracing, when set, makes a client span per command and pipeline
	// (redisotel) with this provider. The commands' arguments (the
	// messages' payloads) are never recorded. Nil: no span, no hook.
	Tracing trace.TracerProvider
}

// options is what a URL says: its topology and the client options of it.
type options struct {
	topology Topology
	single   *redis.Options
	failover *redis.FailoverOptions
	cluster  *redis.ClusterOptions
}

// TopologyOf returns the topology url names, or the error NewClient would
// give for it.
func TopologyOf(url string) (Topology, error) {
	o, err := parse(url)
	if err != nil {
		return "", err
	}
	return o.topology, nil
}

// NewClient returns a client of the Redis cfg names, and its topology. It
// does not connect until the first command.
func NewClient(cfg Config) (redis.UniversalClient, Topology, error) {
	o, err := cfg.options()
	if err != nil {
		return nil, "", err
	}
	client := o.newClient()
	if cfg.Tracing != nil {
		err := redisotel.InstrumentTracing(client, redisotel.WithTracerProvider(cfg.Tracing),
			redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false))
		if err != nil {
			_ = client.Close()
			return nil, "", err
		}
	}
	return client, o.topology, nil
}

func (cfg Config) options() (*options, error) {
	o, err := parse(cfg.URL)
	if err != nil {
		return nil, err
	}
	dial := cfg.DialTimeout
	if dial <= 0 {
		dial = DefaultDialTimeout
	}
	switch o.topology {
	case Single:
		o.single.DialTimeout = orDefault(o.single.DialTimeout, dial)
		o.single.ContextTimeoutEnabled = cfg.FollowContext
	case Sentinel:
		o.failover.DialTimeout = orDefault(o.failover.DialTimeout, dial)
		o.failover.ContextTimeoutEnabled = cfg.FollowContext
	case Cluster:
		o.cluster.DialTimeout = orDefault(o.cluster.DialTimeout, dial)
		o.cluster.ContextTimeoutEnabled = cfg.FollowContext
	}
	return o, nil
}

func (o *options) newClient() redis.UniversalClient {
	switch o.topology {
	case Sentinel:
		return redis.NewFailoverClient(o.failover)
	case Cluster:
		return redis.NewClusterClient(o.cluster)
	default:
		return redis.NewClient(o.single)
	}
}

// addr is where the URL points first: the node, the first Sentinel or the
// first seed, for messages.
func (o *options) addr() string {
	switch o.topology {
	case Sentinel:
		return o.failover.SentinelAddrs[0]
	case Cluster:
		return o.cluster.Addrs[0]
	default:
		return o.single.Addr
	}
}

// parse reads a URL of any of the three forms. Its errors never echo the
// URL, which may hold a password.
func parse(raw string) (*options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, invalid(errors.New("not a URL"))
	}
	switch u.Scheme {
	case "redis+sentinel", "rediss+sentinel":
		return parseSentinel(u)
	case "redis+cluster", "rediss+cluster":
		u.Scheme = strings.TrimSuffix(u.Scheme, "+cluster")
		return parseCluster(u)
	case "redis", "rediss":
		if u.Query().Has("addr") {
			return parseCluster(u)
		}
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, invalid(err)
	}
	return &options{topology: Single, single: o}, nil
}

// parseCluster reads a cluster URL. A cluster has database 0 only.
func parseCluster(u *url.URL) (*options, error) {
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		return nil, invalid(errors.New("a Redis Cluster has database 0 only"))
	}
	u.Path = ""
	o, err := redis.ParseClusterURL(u.String())
	if err != nil {
		return nil, invalid(err)
	}
	return &options{topology: Cluster, cluster: o}, nil
}

// parseSentinel reads a Sentinel URL into go-redis's failover options. The
// user and password of the URL are the data nodes' (as in the other two
// forms); the Sentinels' own, if they need them, are the
// sentinel_username and sentinel_password parameters.
func parseSentinel(u *url.URL) (*options, error) {
	q := u.Query()
	sentinelUser, sentinelPassword := q.Get("sentinel_username"), q.Get("sentinel_password")
	q.Del("sentinel_username")
	q.Del("sentinel_password")
	if u.User != nil {
		q.Set("username", u.User.Username())
		if p, ok := u.User.Password(); ok {
			q.Set("password", p)
		}
		u.User = nil
	}
	if q.Get("master_name") == "" {
		return nil, invalid(errors.New("a Sentinel URL needs master_name, the name the Sentinels monitor the primary under"))
	}
	u.Scheme = strings.TrimSuffix(u.Scheme, "+sentinel")
	u.RawQuery = q.Encode()
	o, err := redis.ParseFailoverURL(u.String())
	if err != nil {
		return nil, invalid(err)
	}
	o.SentinelUsername, o.SentinelPassword = sentinelUser, sentinelPassword
	return &options{topology: Sentinel, failover: o}, nil
}

// invalid is a URL that names no Redis, said without the URL.
func invalid(err error) error {
	return domain.Errorf(domain.CodeValidation, "invalid redis URL: %s", domain.SanitizeError(err))
}

func orDefault(d, def time.Duration) time.Duration {
	if d != 0 {
		return d
	}
	return def
}
