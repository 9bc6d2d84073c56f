package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/jwtauth"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/revocation"
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
	// The HS256 keyring: JWTSecrets (kid:secret, the first signs), or
	// JWTSecret, a ring of one whose tokens carry no kid.
	JWTSecret  string `env:"ONCE_JWT_SECRET"`
	JWTSecrets string `env:"ONCE_JWT_SECRETS"`
	// JWKSURLs are the identity providers' key sets (comma-separated).
	JWKSURLs       string        `env:"ONCE_JWKS_URLS"`
	JWKSRefresh    time.Duration `env:"ONCE_JWKS_REFRESH"`
	JWKSMinRefresh time.Duration `env:"ONCE_JWKS_MIN_REFRESH"`
	// What every token must say, and where it names its bearer.
	JWTIssuer         string        `env:"ONCE_JWT_ISSUER"`
	JWTAudience       string        `env:"ONCE_JWT_AUDIENCE"`
	JWTWorkspaceClaim string        `env:"ONCE_JWT_WORKSPACE_CLAIM"`
	JWTUserClaim      string        `env:"ONCE_JWT_USER_CLAIM"`
	JWTLeeway         time.Duration `env:"ONCE_JWT_LEEWAY"`
	TokenTTL          time.Duration `env:"ONCE_TOKEN_TTL"`
	// OperatorToken is the legacy operator credential, one token shared
	// by all operators (named opshttp.LegacyOperator), beside or instead
	// of OpsConfig.Operators.
	OperatorToken      string `env:"ONCE_OPERATOR_TOKEN"`
	IdempotencySecrets string `env:"ONCE_IDEMPOTENCY_SECRETS"`
	CredentialKeys     string `env:"ONCE_CREDENTIAL_KEYS"`
	// What authentication remembers, memberships and API keys found
	// valid, for AuthCacheTTL (another process sees a removal or a
	// revocation within it; this one at once).
	AuthCacheSize int           `env:"ONCE_AUTH_CACHE_SIZE"`
	AuthCacheTTL  time.Duration `env:"ONCE_AUTH_CACHE_TTL"`
	// TokenRevocationRefresh is how often the revoked tokens are read
	// again: another process's revocation is refused here within it.
	TokenRevocationRefresh time.Duration `env:"ONCE_TOKEN_REVOCATION_REFRESH"`
}

func defaultSecretsConfig() SecretsConfig {
	return SecretsConfig{
		JWTIssuer: "once", TokenTTL: 24 * time.Hour,
		JWKSRefresh: jwtauth.DefaultJWKSRefresh, JWKSMinRefresh: jwtauth.DefaultJWKSMinRefresh,
		JWTWorkspaceClaim: jwtauth.DefaultWorkspaceClaim, JWTUserClaim: jwtauth.DefaultUserClaim, JWTLeeway: jwtauth.DefaultLeeway,
		AuthCacheSize: workspaces.DefaultMembershipCacheSize, AuthCacheTTL: workspaces.DefaultMembershipCacheTTL,
		TokenRevocationRefresh: revocation.DefaultRefresh,
	}
}

// applyDevDefaults fills the secrets left unset with the public dev ones,
// on the embedded store only.
func (c *Config) applyDevDefaults() { c.fillDevSecrets(c.Embedded()) }

func (c *SecretsConfig) fillDevSecrets(embedded bool) {
	if !embedded {
		return
	}
	if c.JWTSecret == "" && c.JWTSecrets == "" {
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
// the tokens and the membership cache. verifiesTokens is false for a
// process that serves no API (once dispatch, once work): it needs no token
// setting, though one that is set must still be valid.
func (c SecretsConfig) Validate(embedded, verifiesTokens bool) error {
	ring, ringErr := c.keyringSecrets()
	return errors.Join(
		ringErr,
		invalidIf(verifiesTokens && len(ring) == 0 && c.JWKSURLs == "",
			"tokens cannot be verified: set ONCE_JWT_SECRET or ONCE_JWT_SECRETS (HS256), or ONCE_JWKS_URLS (an identity provider's keys); one is required with DATABASE_URL"),
		c.validateJWKS(),
		requiredKeyring("ONCE_IDEMPOTENCY_SECRETS", c.IdempotencySecrets, "id:base64key[,id:base64key...]", idempotency.ParseSecrets),
		requiredKeyring("ONCE_CREDENTIAL_KEYS", c.CredentialKeys, "id:base64-32-bytes[,...]", aesgcm.ParseKeys),
		invalidIf(!embedded && (hasSecret(ring, DevJWTSecret) || c.IdempotencySecrets == DevIdempotencySecrets || c.CredentialKeys == DevCredentialKeys),
			"the public dev secrets cannot be used with DATABASE_URL; set ONCE_JWT_SECRET (or ONCE_JWT_SECRETS, or ONCE_JWKS_URLS), ONCE_IDEMPOTENCY_SECRETS and ONCE_CREDENTIAL_KEYS"),
		invalidIf(c.JWTIssuer == "", "ONCE_JWT_ISSUER must not be empty"),
		invalidIf(c.JWTWorkspaceClaim == "" || c.JWTUserClaim == "", "ONCE_JWT_WORKSPACE_CLAIM and ONCE_JWT_USER_CLAIM must not be empty"),
		invalidIf(outside(c.JWTLeeway, 0, 5*time.Minute), "ONCE_JWT_LEEWAY=%s must be between 0 and 5m", c.JWTLeeway),
		invalidIf(c.TokenTTL <= 0, "ONCE_TOKEN_TTL must be positive"),
		invalidIf(c.OperatorToken != "" && (len(c.OperatorToken) < 32 || hasSecret(ring, c.OperatorToken)),
			"ONCE_OPERATOR_TOKEN must be at least 32 bytes and differ from the token secrets ONCE_JWT_SECRET(S) (or be empty; better: ONCE_OPERATORS)"),
		invalidIf(outside(c.AuthCacheSize, 0, 1_000_000), "ONCE_AUTH_CACHE_SIZE=%d must be between 0 (off) and 1000000", c.AuthCacheSize),
		invalidIf(outside(c.AuthCacheTTL, 0, workspaces.MaxMembershipCacheTTL), "ONCE_AUTH_CACHE_TTL=%s must be between 0 (off) and %s: a member removed or an API key revoked through another process keeps access that long", c.AuthCacheTTL, workspaces.MaxMembershipCacheTTL),
		invalidIf(outside(c.TokenRevocationRefresh, time.Second, revocation.MaxRefresh), "ONCE_TOKEN_REVOCATION_REFRESH=%s must be between 1s and %s: a token revoked through another process is accepted here that long", c.TokenRevocationRefresh, revocation.MaxRefresh),
	)
}

// keyringSecrets are the HS256 secrets configured: ONCE_JWT_SECRETS, or
// ONCE_JWT_SECRET as a ring of one without an id, or none.
func (c SecretsConfig) keyringSecrets() ([]jwtauth.Secret, error) {
	switch {
	case c.JWTSecret != "" && c.JWTSecrets != "":
		return nil, errors.New("set ONCE_JWT_SECRET or ONCE_JWT_SECRETS, not both: to rotate, move the secret into ONCE_JWT_SECRETS (docs/operating.md)")
	case c.JWTSecrets != "":
		secrets, err := jwtauth.ParseSecrets(c.JWTSecrets)
		if err != nil {
			return nil, fmt.Errorf("ONCE_JWT_SECRETS: %v (format kid:secret[,kid:secret...], each secret at least %d bytes)", err, jwtauth.MinSecretLen)
		}
		return secrets, nil
	case c.JWTSecret != "":
		if len(c.JWTSecret) < jwtauth.MinSecretLen {
			return nil, fmt.Errorf("ONCE_JWT_SECRET must be at least %d bytes", jwtauth.MinSecretLen)
		}
		return []jwtauth.Secret{{Key: []byte(c.JWTSecret)}}, nil
	}
	return nil, nil
}

// Keyring is the HS256 keyring configured, nil when there is none (the
// tokens come from an identity provider only).
func (c SecretsConfig) Keyring() (*jwtauth.Keyring, error) {
	secrets, err := c.keyringSecrets()
	if err != nil || len(secrets) == 0 {
		return nil, err
	}
	return jwtauth.NewKeyring(secrets...)
}

// JWKSURLList is ONCE_JWKS_URLS as a list.
func (c SecretsConfig) JWKSURLList() []string {
	var urls []string
	for u := range strings.SplitSeq(c.JWKSURLs, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// validateJWKS checks the identity provider's settings: HTTPS URLs (HTTP
// to this host only, for a provider beside the process), an audience, since
// a provider signs tokens for many applications and one meant for another
// must not pass here, and refresh bounds.
func (c SecretsConfig) validateJWKS() error {
	if c.JWKSURLs == "" {
		return nil
	}
	var errs []error
	for _, raw := range c.JWKSURLList() {
		u, err := url.Parse(raw)
		local := err == nil && u.Scheme == "http" && isLoopback(u.Hostname())
		errs = append(errs, invalidIf(err != nil || u.Host == "" || (u.Scheme != "https" && !local),
			"ONCE_JWKS_URLS: %q must be an https URL (http only to localhost)", raw))
	}
	return errors.Join(append(errs,
		invalidIf(c.JWTAudience == "", "ONCE_JWT_AUDIENCE is required with ONCE_JWKS_URLS: the audience your identity provider puts in once's tokens"),
		invalidIf(outside(c.JWKSRefresh, 10*time.Second, 24*time.Hour), "ONCE_JWKS_REFRESH=%s must be between 10s and 24h", c.JWKSRefresh),
		invalidIf(outside(c.JWKSMinRefresh, time.Second, c.JWKSRefresh), "ONCE_JWKS_MIN_REFRESH=%s must be between 1s and ONCE_JWKS_REFRESH", c.JWKSMinRefresh),
	)...)
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

func hasSecret(ring []jwtauth.Secret, secret string) bool {
	for _, s := range ring {
		if string(s.Key) == secret {
			return true
		}
	}
	return false
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
			help:       "HMAC key of the bearer tokens, at least 32 bytes (a keyring of one; or ONCE_JWT_SECRETS)",
			doc:        "HS256 secret of bearer tokens, ≥ 32 bytes: a keyring of one, its tokens without `kid`. With PostgreSQL, this, `ONCE_JWT_SECRETS` or `ONCE_JWKS_URLS` is required by `once serve`; `once dispatch` and `once work` need none.",
			docDefault: "dev secret on the embedded store",
		},
		"ONCE_JWT_SECRETS": {
			help: "HS256 keyring of the bearer tokens, kid:secret[,kid:secret...]: the first signs, all verify",
			doc:  "HS256 keyring `kid:secret[,kid:secret…]` (each secret ≥ 32 bytes, as text, no comma): the first signs (its `kid` in the header), all verify, so a secret is rotated without logging anyone out ([operating.md](operating.md#rotating-the-token-secret)). Instead of `ONCE_JWT_SECRET`, not with it.",
		},
		"ONCE_JWKS_URLS": {
			help: "identity providers' JWKS URLs, comma-separated: accept their RS256, ES256 and EdDSA tokens",
			doc:  "JWKS URLs of identity providers (`https://…/.well-known/jwks.json`), comma-separated: their RS256, ES256 and EdDSA tokens are accepted, checked for `ONCE_JWT_ISSUER` and `ONCE_JWT_AUDIENCE` (required with it). HTTPS, or HTTP to localhost.",
		},
		"ONCE_JWKS_REFRESH": {
			help: "how often the JWKS are fetched again: a key removed from one is refused within it",
			doc:  "how often each JWKS is fetched again (10s to 24h): **a key the provider removes is refused within this time** (while its URL answers; a set that cannot be fetched keeps its last keys)",
		},
		"ONCE_JWKS_MIN_REFRESH": {
			help: "least time between two fetches set off by a token naming an unknown kid",
			doc:  "a token naming a `kid` no set holds fetches the sets again, at most once per this time per process, whoever sends such tokens (1s to `ONCE_JWKS_REFRESH`): a key the provider adds is found within it",
		},
		"ONCE_JWT_ISSUER": {
			help: "issuer (iss) of the bearer tokens: once's own, or the identity provider's",
			doc:  "token issuer (`iss`) required of every token, and written into the HS256 ones; with `ONCE_JWKS_URLS`, the provider's (e.g. `https://example.eu.auth0.com/`)",
		},
		"ONCE_JWT_AUDIENCE": {
			help: "audience (aud) every token must hold; required with ONCE_JWKS_URLS",
			doc:  "audience (`aud`) every token must hold, and written into the HS256 ones; empty: not checked (HS256 only). Required with `ONCE_JWKS_URLS`",
		},
		"ONCE_JWT_WORKSPACE_CLAIM": {
			help: "claim holding the workspace id (a UUID)",
			doc:  "claim holding the workspace id (a UUID); an identity provider adds it as a custom claim",
		},
		"ONCE_JWT_USER_CLAIM": {
			help: "claim holding the user id (a UUID)",
			doc:  "claim holding the user id (a UUID, the member's id in once); set it when the provider's `sub` is its own id",
		},
		"ONCE_JWT_LEEWAY": {
			help: "clock skew allowed on the tokens' exp, nbf and iat",
			doc:  "clock skew allowed between the token's issuer and once on `exp`, `nbf` and `iat` (0 to 5m)",
		},
		"ONCE_TOKEN_TTL": {
			help: "lifetime of the tokens `once token` issues",
			doc:  "lifetime of tokens made by `once token`",
		},
		"ONCE_OPERATOR_TOKEN": {
			help:       "legacy: one operator token shared by all, at least 32 bytes, named \"operator\" in the audit log; prefer ONCE_OPERATORS",
			doc:        "**legacy**: one operator token shared by every operator (≥ 32 bytes, none of the token secrets), which the audit log can only name `operator`; kept so that deployments that set it go on working, beside `ONCE_OPERATORS` or alone (start-up warns). Give each operator a token of their own in `ONCE_OPERATORS` instead ([operating.md](operating.md#operators)). Not a tenant token: an operator sees every workspace's backlog and dead letters and pauses a platform's calls for all",
			docDefault: "*(empty)*",
		},
		"ONCE_IDEMPOTENCY_SECRETS": {
			help:       "keys of the idempotency fingerprints and the API keys' hashes, id:base64key[,id:base64key...]; required with DATABASE_URL",
			doc:        "fingerprint keyring `id:base64key[,id:base64key…]`; the first signs, all verify (rotation keeps in-flight retries valid). Keys ≥ 32 bytes. API keys are stored as HMACs under keys derived from it: one hashed under a key you remove stops working unless it was used since that key stopped being first ([api.md](api.md#api-keys)).",
			docDefault: "dev secret on the embedded store",
		},
		"ONCE_CREDENTIAL_KEYS": {
			help:       "AES-256-GCM keys of the stored secrets (store credentials, webhook secrets), id:base64-32-bytes[,...], the first seals; required with DATABASE_URL",
			doc:        "AES-256-GCM keyring for the stored secrets (store credentials, webhook signing secrets), `id:base64-32-bytes[,…]`; the first seals, all open; retiring a key: [operating.md](operating.md#retiring-a-credential-key)",
			docDefault: "dev key on the embedded store",
		},
		"ONCE_AUTH_CACHE_SIZE": {
			help: "memberships, and API keys found valid, authentication remembers, each (0: off)",
			doc:  "(workspace, user) memberships, and API keys found valid, each process remembers for authentication (each up to this many); `0` turns it off",
		},
		"ONCE_AUTH_CACHE_TTL": {
			help: "for at most this long: another process sees a member's removal or a key's revocation within it",
			doc:  "how long one is remembered (0 to `1m`). A removal or an API key's revocation through this process is seen at once; **another process sees it within this TTL** ([api.md](api.md#api-keys))",
		},
		"ONCE_TOKEN_REVOCATION_REFRESH": {
			help: "how often the revoked tokens are read again: another process's revocation is refused within it",
			doc:  "how often each `once serve` reads the revoked tokens again into memory (1s to `1m`; half of it in the background, and a request that finds them older reads them first). Every request is checked in memory, never against the database. A revocation (`POST /v1/tokens/revoke`, `POST /v1/members/{user_id}/revoke-tokens`) through this process applies at once; **another process refuses the token within this time** ([api.md](api.md#revoking-tokens)). A process that cannot read them for longer answers 503",
		},
	},
}
