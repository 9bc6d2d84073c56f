package app

import (
	"strings"
	"testing"
	"time"

	"github.com/oncehq/once/adapters/postgres"
)

func TestConfigRefusesShortRetention(t *testing.T) {
	t.Setenv("ONCE_IDEMPOTENCY_RETENTION", "23h")
	_, err := LoadConfig()
	if err == nil || !strings.Contains(err.Error(), "ONCE_IDEMPOTENCY_RETENTION") {
		t.Fatalf("want a retention error naming the variable, got %v", err)
	}
}

func TestConfigEmbeddedDefaultsWork(t *testing.T) {
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Embedded() || cfg.IdempotencyRetention != 48*time.Hour {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
}

func TestConfigRefusesDevSecretsWithPostgres(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://x@127.0.0.1/once")
	_, err := LoadConfig()
	if err == nil {
		t.Fatal("want an error: no secrets configured for PostgreSQL")
	}
	for _, v := range []string{"ONCE_JWT_SECRET", "ONCE_IDEMPOTENCY_SECRETS", "ONCE_CREDENTIAL_KEYS"} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error does not name %s: %v", v, err)
		}
	}
	t.Setenv("ONCE_JWT_SECRET", DevJWTSecret)
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", DevIdempotencySecrets)
	t.Setenv("ONCE_CREDENTIAL_KEYS", DevCredentialKeys)
	if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), "public dev secrets") {
		t.Fatalf("want the dev secrets refused, got %v", err)
	}
}

// TestConfigParseErrorsNameTheVariable: a value that does not parse is
// reported by its environment variable, not by the Go field.
func TestConfigParseErrorsNameTheVariable(t *testing.T) {
	t.Setenv("ONCE_DISPATCH_BATCH", "many")
	t.Setenv("ONCE_DISPATCH_LEASE", "soon")
	_, err := LoadConfig()
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"ONCE_DISPATCH_BATCH", "ONCE_DISPATCH_LEASE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "DispatchBatch") {
		t.Errorf("%q names the Go field", err)
	}
}

func TestConfigChecksBrokerOutageAndStorageSettings(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.DispatchBreakerFailures != 3 || cfg.DispatchBreakerOpen != 5*time.Second ||
		cfg.RedisClaimIdle != time.Minute || cfg.RedisTrimInterval != time.Minute {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
	for name, value := range map[string]string{
		"ONCE_DISPATCH_BREAKER_FAILURES": "0",
		"ONCE_DISPATCH_BREAKER_OPEN":     "1h",
		"ONCE_REDIS_CLAIM_IDLE":          "10ms",
		"ONCE_REDIS_TRIM_INTERVAL":       "0s",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := LoadConfig()
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%s: want an error naming the variable, got %v", name, value, err)
			}
		})
	}
}

func TestConfigPoolDefaultsAndLimits(t *testing.T) {
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.DBPool(), postgres.DefaultPool(); got != want {
		t.Fatalf("the pool defaults of the configuration %+v differ from the adapter's %+v", got, want)
	}
	for name, env := range map[string]map[string]string{
		"ONCE_DB_MAX_CONNS":       {"ONCE_DB_MAX_CONNS": "0"},
		"ONCE_DB_MAX_IDLE":        {"ONCE_DB_MAX_CONNS": "4", "ONCE_DB_MAX_IDLE": "5"},
		"ONCE_DB_ACQUIRE_TIMEOUT": {"ONCE_DB_ACQUIRE_TIMEOUT": "0s"},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("want an error naming %s, got %v", name, err)
			}
		})
	}
}

// ONCE_REDIS_URL takes each topology's form and refuses what names none;
// BullMQ on a Cluster needs a hash-tagged prefix (or queue names); the
// RabbitMQ queue type is quorum or classic.
func TestConfigChecksTheBrokerSettings(t *testing.T) {
	for _, url := range []string{
		"redis://127.0.0.1:6379/0",
		"redis+sentinel://127.0.0.1:26379/0?master_name=mymaster",
		"redis+cluster://127.0.0.1:7000",
		"redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002",
	} {
		t.Run(url, func(t *testing.T) {
			t.Setenv("ONCE_QUEUE", QueueRedis)
			t.Setenv("ONCE_REDIS_URL", url)
			if _, err := LoadConfig(); err != nil {
				t.Fatal(err)
			}
		})
	}
	for name, c := range map[string]struct {
		env  map[string]string
		says string
	}{
		"a URL of no topology":         {map[string]string{"ONCE_QUEUE": "redis", "ONCE_REDIS_URL": "redis+sentinel://:hunter2@127.0.0.1:26379/0"}, "ONCE_REDIS_URL"},
		"BullMQ untagged on a cluster": {map[string]string{"ONCE_QUEUE": "bullmq", "ONCE_REDIS_URL": "redis+cluster://127.0.0.1:7000"}, "ONCE_BULLMQ_PREFIX"},
		"an unknown queue type":        {map[string]string{"ONCE_QUEUE": "amqp", "ONCE_AMQP_QUEUE_TYPE": "lazy"}, "ONCE_AMQP_QUEUE_TYPE"},
		"no delivery limit of 0":       {map[string]string{"ONCE_QUEUE": "amqp", "ONCE_AMQP_DELIVERY_LIMIT": "0"}, "ONCE_AMQP_DELIVERY_LIMIT"},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			_, err := LoadConfig()
			if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("want an error naming %s (and no password), got %v", c.says, err)
			}
		})
	}
	t.Setenv("ONCE_QUEUE", QueueBullMQ)
	t.Setenv("ONCE_REDIS_URL", "redis+cluster://127.0.0.1:7000")
	t.Setenv("ONCE_BULLMQ_PREFIX", "{bull}")
	if _, err := LoadConfig(); err != nil {
		t.Fatalf("a hash-tagged prefix on a cluster: %v", err)
	}
}

// The Dispatcher's own bounds (dispatch.Config.Validate) are reported by
// the variables that set them, never by the Go fields.
func TestConfigNamesTheDispatchersBounds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DispatchBatch, cfg.DispatchPollInterval = 0, 0
	cfg.DispatchBackoffBase, cfg.DispatchBackoffMax = time.Minute, time.Second
	err := cfg.DispatchConfig.Validate()
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"ONCE_DISPATCH_BATCH", "ONCE_DISPATCH_POLL_INTERVAL", "ONCE_DISPATCH_BACKOFF_MAX must be at least ONCE_DISPATCH_BACKOFF_BASE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "Batch") || strings.Contains(err.Error(), "PollInterval") {
		t.Errorf("%q names a Go field", err)
	}
}

func TestConfigChecksTheS3Settings(t *testing.T) {
	valid := map[string]string{
		"ONCE_OBJECT_STORE": "s3",
		"ONCE_S3_ENDPOINT":  "https://s3.eu-central-1.amazonaws.com",
		"ONCE_S3_BUCKET":    "once-media",
	}
	for name, value := range valid {
		t.Setenv(name, value)
	}
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatalf("valid S3 settings: %v", err)
	}
	if cfg.S3URLTTL != 15*time.Minute || cfg.S3Region != "us-east-1" {
		t.Fatalf("unexpected defaults: %+v", cfg.ObjectStoreConfig)
	}
	for name, value := range map[string]string{
		"ONCE_S3_ENDPOINT": "s3.amazonaws.com/bucket",
		"ONCE_S3_BUCKET":   "",
		"ONCE_S3_PREFIX":   "no-slash",
		"ONCE_S3_URL_TTL":  "2h",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := LoadConfig()
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%q: want an error naming the variable, got %v", name, value, err)
			}
		})
	}
}
