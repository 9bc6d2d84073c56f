package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryVariableHasHelp: each variable of each group of Config (read
// from the structs here independently of ConfigVars) is listed once with
// a line of help, and no group declares a setting for a variable it does
// not have.
func TestEveryVariableHasHelp(t *testing.T) {
	var want []string
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		group := typ.Field(i)
		require.True(t, group.Anonymous, "Config.%s: Config is made of embedded groups", group.Name)
		declared := reflect.New(group.Type).Elem().Interface().(configGroup).settings().vars
		var names []string
		for j := range group.Type.NumField() {
			name, _, _ := strings.Cut(group.Type.Field(j).Tag.Get("env"), ",")
			require.NotEmpty(t, name, "%s.%s has no env tag", group.Name, group.Type.Field(j).Name)
			assert.NotContains(t, group.Type.Field(j).Tag, "envDefault", "%s: the default is set in code, by the group's default function", name)
			names = append(names, name)
		}
		for name := range declared {
			assert.Contains(t, names, name, "%s declares a setting for %s, which it does not have", group.Name, name)
		}
		want = append(want, names...)
	}
	var got []string
	for _, v := range ConfigVars() {
		got = append(got, v.Name)
		assert.NotEmpty(t, v.Help, "%s has no help in its group's settings", v.Name)
	}
	assert.Equal(t, want, got)
}

func TestSecretsAreKnownByName(t *testing.T) {
	secret := map[string]bool{}
	for _, v := range ConfigVars() {
		secret[v.Name] = v.Secret
	}
	for _, name := range []string{"ONCE_JWT_SECRET", "ONCE_IDEMPOTENCY_SECRETS", "ONCE_CREDENTIAL_KEYS", "ONCE_OPERATOR_TOKEN"} {
		assert.True(t, secret[name], name)
	}
	for _, name := range []string{"ONCE_TOKEN_TTL", "ONCE_JWT_ISSUER", "DATABASE_URL", "ONCE_HTTP_ADDR"} {
		assert.False(t, secret[name], name)
	}
}

// TestEffectiveMasksSecretsAndPasswords: no secret and no password of a
// URL or connection string reaches the output; what is not secret does,
// with where it came from.
func TestEffectiveMasksSecretsAndPasswords(t *testing.T) {
	c := DefaultConfig()
	c.JWTSecret = "jwt-secret-0123456789abcdef0123456789abcdef"
	c.IdempotencySecrets = "k2:c2VjcmV0LWtleS10d28=,k1:c2VjcmV0LWtleS1vbmU="
	c.CredentialKeys = "c1:Y3JlZGVudGlhbHMta2V5LTMyYnl0ZXMtbG9uZy1vbmU="
	c.OperatorToken = "operator-token-0123456789abcdef0123"
	c.Operators = "alice:3c4fa1b2,bob:9a0ec3d4"
	c.DatabaseURL = "postgres://once_service:db-pass-1@db:5432/once?sslmode=require"
	c.MigrateDatabaseURL = "host=db user=once_owner password='mig pass 2' dbname=once"
	c.RedisURL = "redis://:redis-pass-3@cache:6379/0"
	c.SimURL = "http://sim:8090/?password=sim-pass-4"
	env := map[string]string{"DATABASE_URL": c.DatabaseURL, "ONCE_JWT_SECRET": c.JWTSecret}
	values := c.Effective(func(name string) (string, bool) { v, ok := env[name]; return v, ok })

	got := map[string]ConfigValue{}
	var all strings.Builder
	for _, v := range values {
		got[v.Name] = v
		all.WriteString(v.Value + "\n")
	}
	require.Len(t, values, len(ConfigVars()))
	for _, secret := range []string{"jwt-secret", "c2VjcmV0", "Y3JlZGVudGlhbHM", "operator-token", "db-pass-1", "mig pass 2", "redis-pass-3", "sim-pass-4", "guest:guest"} {
		assert.NotContains(t, all.String(), secret)
	}
	assert.Equal(t, "********", got["ONCE_JWT_SECRET"].Value)
	assert.Equal(t, "k2:********,k1:********", got["ONCE_IDEMPOTENCY_SECRETS"].Value, "the ids say which keys are set")
	assert.Equal(t, "alice:********,bob:********", got["ONCE_OPERATORS"].Value, "the names say who may operate")
	assert.Equal(t, "postgres://once_service:********@db:5432/once?sslmode=require", got["DATABASE_URL"].Value)
	assert.Equal(t, "host=db user=once_owner password=******** dbname=once", got["ONCE_MIGRATE_DATABASE_URL"].Value)
	assert.Equal(t, "amqp://guest:********@127.0.0.1:5672/", got["ONCE_AMQP_URL"].Value)
	assert.Equal(t, "127.0.0.1:8080", got["ONCE_HTTP_ADDR"].Value)
	assert.Equal(t, "24h0m0s", got["ONCE_TOKEN_TTL"].Value)

	assert.Equal(t, "environment", got["DATABASE_URL"].Source)
	assert.Equal(t, "default", got["ONCE_HTTP_ADDR"].Source)
	assert.Equal(t, "dev default", got["ONCE_OPERATOR_TOKEN"].Source, "set by no one and not the struct's default")
}
