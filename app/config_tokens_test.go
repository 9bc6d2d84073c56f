package app

import (
	"strings"
	"testing"
)

// postgresEnv is a PostgreSQL configuration with every secret but the
// token ones.
func postgresEnv(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://x@127.0.0.1/once")
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", "k1:"+strings.Repeat("QUJD", 11))
	t.Setenv("ONCE_CREDENTIAL_KEYS", "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
}

// once dispatch and once work verify no token: they start without any
// token setting; once serve does not.
func TestBackgroundProcessesNeedNoTokenSecret(t *testing.T) {
	postgresEnv(t)
	if _, err := LoadBackgroundConfig(); err != nil {
		t.Fatalf("dispatch/work configuration without a token secret: %v", err)
	}
	_, err := LoadConfig()
	if err == nil || !strings.Contains(err.Error(), "ONCE_JWKS_URLS") || !strings.Contains(err.Error(), "ONCE_JWT_SECRET") {
		t.Fatalf("serve without a way to verify tokens: err = %v, want one naming the settings", err)
	}
	// A token setting that is set is checked all the same.
	t.Setenv("ONCE_JWT_SECRET", "short")
	if _, err := LoadBackgroundConfig(); err == nil || !strings.Contains(err.Error(), "ONCE_JWT_SECRET") {
		t.Fatalf("a short ONCE_JWT_SECRET in a background process: err = %v", err)
	}
}

// Each token setting is checked at start, the error naming it.
func TestTokenSettingsAreValidated(t *testing.T) {
	const s32 = "0123456789abcdef0123456789abcdef"
	ok := map[string]map[string]string{
		"one secret":    {"ONCE_JWT_SECRET": s32},
		"a keyring":     {"ONCE_JWT_SECRETS": "new:" + s32 + "x,old:" + s32},
		"a JWKS":        {"ONCE_JWKS_URLS": "https://idp.example/.well-known/jwks.json", "ONCE_JWT_AUDIENCE": "once", "ONCE_JWT_ISSUER": "https://idp.example/"},
		"a local JWKS":  {"ONCE_JWKS_URLS": "http://127.0.0.1:8080/jwks, http://localhost/jwks", "ONCE_JWT_AUDIENCE": "once"},
		"custom claims": {"ONCE_JWT_SECRET": s32, "ONCE_JWT_WORKSPACE_CLAIM": "https://once.example/wsp", "ONCE_JWT_USER_CLAIM": "uid"},
	}
	for name, env := range ok {
		t.Run(name, func(t *testing.T) {
			postgresEnv(t)
			for k, v := range env {
				t.Setenv(k, v)
			}
			if _, err := LoadConfig(); err != nil {
				t.Fatal(err)
			}
		})
	}
	bad := map[string]struct {
		env  map[string]string
		want string
	}{
		"both secret settings":  {map[string]string{"ONCE_JWT_SECRET": s32, "ONCE_JWT_SECRETS": "a:" + s32}, "not both"},
		"a short ring secret":   {map[string]string{"ONCE_JWT_SECRETS": "a:short"}, "ONCE_JWT_SECRETS"},
		"a ring without kids":   {map[string]string{"ONCE_JWT_SECRETS": s32}, "ONCE_JWT_SECRETS"},
		"a kid twice":           {map[string]string{"ONCE_JWT_SECRETS": "a:" + s32 + ",a:" + s32 + "x"}, "ONCE_JWT_SECRETS"},
		"the dev secret":        {map[string]string{"ONCE_JWT_SECRETS": "dev:" + DevJWTSecret}, "public dev secrets"},
		"JWKS without audience": {map[string]string{"ONCE_JWKS_URLS": "https://idp.example/jwks"}, "ONCE_JWT_AUDIENCE"},
		"JWKS over http":        {map[string]string{"ONCE_JWKS_URLS": "http://idp.example/jwks", "ONCE_JWT_AUDIENCE": "once"}, "ONCE_JWKS_URLS"},
		"JWKS not a URL":        {map[string]string{"ONCE_JWKS_URLS": "idp.example", "ONCE_JWT_AUDIENCE": "once"}, "ONCE_JWKS_URLS"},
		"refresh too often":     {map[string]string{"ONCE_JWKS_URLS": "https://idp.example/jwks", "ONCE_JWT_AUDIENCE": "once", "ONCE_JWKS_REFRESH": "1s"}, "ONCE_JWKS_REFRESH"},
		"min refresh above":     {map[string]string{"ONCE_JWKS_URLS": "https://idp.example/jwks", "ONCE_JWT_AUDIENCE": "once", "ONCE_JWKS_MIN_REFRESH": "1h"}, "ONCE_JWKS_MIN_REFRESH"},
		"leeway too long":       {map[string]string{"ONCE_JWT_SECRET": s32, "ONCE_JWT_LEEWAY": "1h"}, "ONCE_JWT_LEEWAY"},
		"operator = ring key":   {map[string]string{"ONCE_JWT_SECRETS": "a:" + s32 + "x,b:" + s32, "ONCE_OPERATOR_TOKEN": s32}, "ONCE_OPERATOR_TOKEN"},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			postgresEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %s", err, c.want)
			}
		})
	}
}
