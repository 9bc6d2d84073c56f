package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/workspaces"
)

// Dev secrets make the embedded default run with no setup. They are public
// (they are in this file), so they are refused with PostgreSQL.
const (
	DevJWTSecret          = "once-dev-jwt-secret-do-not-use-in-production-0001"
	DevIdempotencySecrets = "dev:b25jZS1kZXYtaWRlbXBvdGVuY3ktc2VjcmV0LWtleS0wMDAx"
	DevCredentialKeys     = "dev:b25jZS1kZXYtY3JlZGVudGlhbHMta2V5LTMyYnl0ZXM="
)

// SecretsConfig is authentication and the keys of what is stored signed
// or sealed.
type SecretsConfig struct {
	JWTSecret string        `env:"ONCE_JWT_SECRET"`
	JWTIssuer string        `env:"ONCE_JWT_ISSUER"`
	TokenTTL  time.Duration `env:"ONCE_TOKEN_TTL"`
	// OperatorToken is the operator credential (not a tenant token): the
	// console and every operator route of the ops listener; empty turns
	// them off.
	OperatorToken      string `env:"ONCE_OPERATOR_TOKEN"`
	IdempotencySecrets string `env:"ONCE_IDEMPOTENCY_SECRETS"`
	CredentialKeys     string `env:"ONCE_CREDENTIAL_KEYS"`
	// The membership check of authentication, remembered for AuthCacheTTL
	// (another process sees a removal within it; this one at once).
	AuthCacheSize int           `env:"ONCE_AUTH_CACHE_SIZE"`
	AuthCacheTTL  time.Duration `env:"ONCE_AUTH_CACHE_TTL"`
}

func defaultSecretsConfig() SecretsConfig {
	return SecretsConfig{
		JWTIssuer: "once", TokenTTL: 24 * time.Hour,
		AuthCacheSize: workspaces.DefaultMembershipCacheSize, AuthCacheTTL: workspaces.DefaultMembershipCacheTTL,
	}
}

// applyDevDefaults fills the secrets left unset with the public dev ones,
// on the embedded store only.
func (c *Config) applyDevDefaults() { c.fillDevSecrets(c.Embedded()) }

func (c *SecretsConfig) fillDevSecrets(embedded bool) {
	if !embedded {
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

// Validate checks the secrets (the dev ones are refused unless embedded),
// the tokens and the membership cache.
func (c SecretsConfig) Validate(embedded bool) error {
	return errors.Join(
		invalidIf(len(c.JWTSecret) < 32, "ONCE_JWT_SECRET must be at least 32 bytes"),
		requiredKeyring("ONCE_IDEMPOTENCY_SECRETS", c.IdempotencySecrets, "id:base64key[,id:base64key...]", idempotency.ParseSecrets),
		requiredKeyring("ONCE_CREDENTIAL_KEYS", c.CredentialKeys, "id:base64-32-bytes[,...]", aesgcm.ParseKeys),
		invalidIf(!embedded && (c.JWTSecret == DevJWTSecret || c.IdempotencySecrets == DevIdempotencySecrets || c.CredentialKeys == DevCredentialKeys),
			"the public dev secrets cannot be used with DATABASE_URL; set ONCE_JWT_SECRET, ONCE_IDEMPOTENCY_SECRETS and ONCE_CREDENTIAL_KEYS"),
		invalidIf(c.TokenTTL <= 0, "ONCE_TOKEN_TTL must be positive"),
		invalidIf(c.OperatorToken != "" && (len(c.OperatorToken) < 32 || c.OperatorToken == c.JWTSecret),
			"ONCE_OPERATOR_TOKEN must be at least 32 bytes and differ from ONCE_JWT_SECRET (or be empty: no operator console)"),
		invalidIf(outside(c.AuthCacheSize, 0, 1_000_000), "ONCE_AUTH_CACHE_SIZE=%d must be between 0 (off) and 1000000", c.AuthCacheSize),
		invalidIf(outside(c.AuthCacheTTL, 0, workspaces.MaxMembershipCacheTTL), "ONCE_AUTH_CACHE_TTL=%s must be between 0 (off) and %s: a member removed through another process keeps access that long", c.AuthCacheTTL, workspaces.MaxMembershipCacheTTL),
	)
}

// requiredKeyring checks a keyring setting that must be set, in format,
// and parse (idempotency.ParseSecrets, aesgcm.ParseKeys) must read.
func requiredKeyring[K any](name, value, format string, parse func(string) (K, error)) error {
	if value == "" {
		return fmt.Errorf("%s is required with DATABASE_URL (format %s)", name, format)
	}
	_, err := parse(value)
	return invalidIf(err != nil, "%s: %v", name, err)
}

func (SecretsConfig) settings() settingGroup { return secretsSettings }

var secretsSettings = settingGroup{
	title: "Authentication and secrets",
	vars: map[string]setting{
		"ONCE_JWT_SECRET": {
			help:       "HMAC key of the bearer tokens, at least 32 bytes; required with DATABASE_URL",
			doc:        "HS256 secret of bearer tokens, ≥ 32 bytes. Required with PostgreSQL.",
			docDefault: "dev secret on the embedded store",
		},
		"ONCE_JWT_ISSUER": {
			help: "issuer (iss) of the bearer tokens",
			doc:  "token issuer (`iss`)",
		},
		"ONCE_TOKEN_TTL": {
			help: "lifetime of the tokens `once token` issues",
			doc:  "lifetime of tokens made by `once token`",
		},
		"ONCE_OPERATOR_TOKEN": {
			help:       "the operator credential, at least 32 bytes: the console and the ops listener's actions (/destinations, /debug/pprof); empty: all off",
			doc:        "the operator credential, ≥ 32 bytes and not `ONCE_JWT_SECRET`: a bearer token for the ops listener's operator routes (the console's API, `/destinations`, `/debug/pprof/`; see [operating.md](operating.md#operator-actions)), typed into the console's login form for the page. Not a tenant token: it sees every workspace's backlog and dead letters and pauses a platform's calls for all",
			docDefault: "*(empty: console and operator actions off)*",
		},
		"ONCE_IDEMPOTENCY_SECRETS": {
			help:       "keys of the idempotency fingerprints, id:base64key[,id:base64key...]; required with DATABASE_URL",
			doc:        "fingerprint keyring `id:base64key[,id:base64key…]`; the first signs, all verify (rotation keeps in-flight retries valid). Keys ≥ 32 bytes.",
			docDefault: "dev secret on the embedded store",
		},
		"ONCE_CREDENTIAL_KEYS": {
			help:       "AES-256-GCM keys of the stored platform credentials, id:base64-32-bytes[,...]; required with DATABASE_URL",
			doc:        "AES-256-GCM keyring for store credentials, `id:base64-32-bytes[,…]`; the first seals, all open",
			docDefault: "dev key on the embedded store",
		},
		"ONCE_AUTH_CACHE_SIZE": {
			help: "memberships authentication remembers (0: off)",
			doc:  "(workspace, user) memberships each process remembers for authentication; `0` turns it off",
		},
		"ONCE_AUTH_CACHE_TTL": {
			help: "for at most this long: another process sees a member's removal within it",
			doc:  "how long one is remembered (0 to `1m`). A removal through this process is seen at once; **another process sees it within this TTL**",
		},
	},
}
