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
