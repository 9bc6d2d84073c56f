// Package jwtauth issues and verifies the access tokens of once: JWTs that
// name a user and a workspace, signed either by once with an HS256 keyring
// (the embedded default, small deployments) or by the team's identity
// provider, whose public keys a JWKS holds (RS256, ES256, EdDSA).
package jwtauth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// MinSecretLen is the shortest HMAC secret accepted, in bytes (RFC 7518
// section 3.2: a key of at least the hash output size).
const MinSecretLen = 32

// maxTokenLen bounds the work a caller can ask of Verify; tokens are a few
// hundred bytes, an identity provider's a few kB.
const maxTokenLen = 8 << 10

// Default claim names and clock leeway of VerifierOptions.
const (
	DefaultWorkspaceClaim = "wsp"
	DefaultUserClaim      = "sub"
	DefaultLeeway         = 30 * time.Second
)

// hs256 is the one algorithm of the keyring; the JWKS's are in fits.
var hs256 = jwt.SigningMethodHS256

// Claims is what a verified token says about its bearer, and of itself
// what revocation needs (model.AccessToken).
type Claims struct {
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	// TokenID names the token for revocation: "jti:" and its jti, or
	// "sha256:" and the hex SHA-256 of the token for one without a jti
	// (or with one longer than maxJTILen).
	TokenID string
	// IssuedAt is iat, zero when absent; ExpiresAt is exp plus the leeway,
	// the last instant the token is accepted.
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// AccessToken is c as revocation reads it.
func (c Claims) AccessToken() model.AccessToken {
	return model.AccessToken{ID: c.TokenID, WorkspaceID: c.WorkspaceID, UserID: c.UserID, IssuedAt: c.IssuedAt, ExpiresAt: c.ExpiresAt}
}

// maxJTILen bounds the jti kept as a token's id; a longer one (no
// provider makes one) is named by the token's digest instead.
const maxJTILen = 200

// tokenID is the id revocation names token by (Claims.TokenID).
func tokenID(claims jwt.MapClaims, token string) string {
	if jti, ok := claims["jti"].(string); ok && jti != "" && len(jti) <= maxJTILen {
		return "jti:" + jti
	}
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Issuer signs access tokens with the first secret of a keyring.
type Issuer struct {
	ring *Keyring
	opts IssuerOptions
	now  func() time.Time
}

// IssuerOptions say what an Issuer's tokens say: "iss", "aud" when not
// empty, the claims naming the workspace and the user (empty: the
// defaults, as VerifierOptions), and how long they live (> 0). Now is the
// clock of their iat and exp (nil: the wall clock).
type IssuerOptions struct {
	Issuer, Audience          string
	WorkspaceClaim, UserClaim string
	TTL                       time.Duration
	Now                       func() time.Time
}

// NewIssuer builds an Issuer that signs with ring's first secret.
func NewIssuer(ring *Keyring, opts IssuerOptions) (*Issuer, error) {
	if ring == nil {
		return nil, errors.New("jwtauth: no keyring to sign with")
	}
	if opts.Issuer == "" {
		return nil, errors.New("jwtauth: the issuer is empty")
	}
	if opts.TTL <= 0 {
		return nil, errors.New("jwtauth: the token lifetime must be positive")
	}
	opts.WorkspaceClaim = cmp.Or(opts.WorkspaceClaim, DefaultWorkspaceClaim)
	opts.UserClaim = cmp.Or(opts.UserClaim, DefaultUserClaim)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Issuer{ring: ring, opts: opts, now: now}, nil
}

// Issue signs a token for user in workspace, valid from now for the ttl,
// with a jti of its own, so that it can be revoked alone.
func (i *Issuer) Issue(workspace, user uuid.UUID) (string, error) {
	if workspace == uuid.Nil || user == uuid.Nil {
		return "", errors.New("jwtauth: a token needs a workspace and a user")
	}
	now := i.now()
	claims := jwt.MapClaims{
		"iss":                 i.opts.Issuer,
		i.opts.UserClaim:      user.String(),
		i.opts.WorkspaceClaim: workspace.String(),
		"iat":                 now.Unix(),
		"exp":                 now.Add(i.opts.TTL).Unix(),
		"jti":                 uuid.NewString(),
	}
	if i.opts.Audience != "" {
		claims["aud"] = i.opts.Audience
	}
	token := jwt.NewWithClaims(hs256, claims)
	secret := i.ring.signing()
	if secret.ID != "" {
		token.Header["kid"] = secret.ID
	}
	signed, err := token.SignedString(secret.Key)
	if err != nil {
		return "", fmt.Errorf("jwtauth: sign: %w", err)
	}
	return signed, nil
}

// VerifierOptions say which tokens a Verifier accepts.
type VerifierOptions struct {
	// Keyring verifies HS256 tokens; JWKS RS256, ES256 and EdDSA ones.
	// At least one is needed; an algorithm whose source is absent is
	// refused, so "none" always is, and so is HS256 without a keyring
	// (the public key used as an HMAC secret).
	Keyring *Keyring
	JWKS    *JWKS
	// Issuer is the "iss" required; Audience, when not empty, a value "aud"
	// must hold.
	Issuer   string
	Audience string
	// WorkspaceClaim and UserClaim name the claims holding the workspace
	// and user ids (UUIDs); empty: DefaultWorkspaceClaim, DefaultUserClaim.
	WorkspaceClaim, UserClaim string
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
}

// Verifier checks access tokens.
type Verifier struct {
	opts    VerifierOptions
	methods []string
	now     func() time.Time
	// verified remembers tokens that passed (verified.go): a client sends
	// the same token with every request, and checking it again was a tenth
	// of the service's CPU per write.
	verified *verifiedTokens
}

// NewVerifier builds a Verifier for opts.
func NewVerifier(opts VerifierOptions) (*Verifier, error) {
	if opts.Keyring == nil && opts.JWKS == nil {
		return nil, errors.New("jwtauth: nothing to verify tokens with: no keyring and no JWKS")
	}
	if opts.Issuer == "" {
		return nil, errors.New("jwtauth: the issuer is empty")
	}
	if opts.Leeway < 0 {
		return nil, errors.New("jwtauth: the leeway is negative")
	}
	opts.WorkspaceClaim = cmp.Or(opts.WorkspaceClaim, DefaultWorkspaceClaim)
	opts.UserClaim = cmp.Or(opts.UserClaim, DefaultUserClaim)
	var methods []string
	if opts.Keyring != nil {
		methods = append(methods, hs256.Alg())
	}
	if opts.JWKS != nil {
		methods = append(methods, "RS256", "ES256", "EdDSA")
	}
	return &Verifier{opts: opts, methods: methods, now: time.Now, verified: newVerifiedTokens(verifiedTokensSize)}, nil
}

// Verify checks token's signature with the key its algorithm and kid
// name, its issuer, its audience when one is configured, that it carries an
// expiry that has not passed (give or take the leeway), and that the
// workspace and user claims are UUIDs, and returns them. Every failure is
// domain.CodeUnauthenticated; the message never echoes the token.
//
// A token that passed is remembered (verified.go), so a repeated token
// costs a map lookup and a clock read.
func (v *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	if c, ok := v.verified.get(token, v.now()); ok {
		return c, nil
	}
	if token == "" {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "an access token is required")
	}
	if len(token) > maxTokenLen {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "the access token is invalid")
	}
	// recheck is when the key's source must be asked again (a JWKS key
	// may be removed); zero: never before the expiry.
	var recheck time.Time
	keyOf := func(t *jwt.Token) (any, error) {
		key, until, err := v.key(ctx, t)
		recheck = until
		return key, err
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(v.methods),
		jwt.WithIssuer(v.opts.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(v.opts.Leeway),
		jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(v.now),
	}
	if v.opts.Audience != "" {
		opts = append(opts, jwt.WithAudience(v.opts.Audience))
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(token, claims, keyOf, opts...); err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return Claims{}, domain.Wrap(domain.CodeUnauthenticated, err, "the access token has expired")
		}
		return Claims{}, domain.Wrap(domain.CodeUnauthenticated, err, "the access token is invalid")
	}
	user, ok := uuidClaim(claims, v.opts.UserClaim)
	if !ok {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "the access token names no valid user")
	}
	workspace, ok := uuidClaim(claims, v.opts.WorkspaceClaim)
	if !ok {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "the access token names no valid workspace")
	}
	exp, _ := claims.GetExpirationTime() // required above
	c := Claims{WorkspaceID: workspace, UserID: user, TokenID: tokenID(claims, token), ExpiresAt: exp.Add(v.opts.Leeway)}
	if iat, err := claims.GetIssuedAt(); err == nil && iat != nil {
		c.IssuedAt = iat.Time
	}
	until := exp.Add(v.opts.Leeway)
	if !recheck.IsZero() && recheck.Before(until) {
		until = recheck
	}
	v.verified.put(token, c, until)
	return c, nil
}

// VerifyToken implements ports.TokenVerifier: Verify, as an access token.
func (v *Verifier) VerifyToken(ctx context.Context, token string) (model.AccessToken, error) {
	c, err := v.Verify(ctx, token)
	return c.AccessToken(), err
}

// key is the key for t's algorithm and kid, and when to ask for it again.
func (v *Verifier) key(ctx context.Context, t *jwt.Token) (any, time.Time, error) {
	kid, hasKID := t.Header["kid"].(string)
	if _, present := t.Header["kid"]; present && !hasKID {
		return nil, time.Time{}, errors.New("the kid is not a string")
	}
	switch alg := t.Method.Alg(); alg {
	case hs256.Alg():
		key, ok := v.opts.Keyring.verifying(kid, hasKID)
		if !ok {
			return nil, time.Time{}, errors.New("no secret has this kid")
		}
		return key, time.Time{}, nil
	default: // WithValidMethods let through only the JWKS's algorithms
		return v.opts.JWKS.verifying(ctx, alg, kid, hasKID)
	}
}

// uuidClaim reads claim as a UUID string other than the nil UUID.
func uuidClaim(claims jwt.MapClaims, claim string) (uuid.UUID, bool) {
	s, ok := claims[claim].(string)
	if !ok {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil && id != uuid.Nil
}

// verificationKeys is keys as golang-jwt's set of candidates: a signature
// any of them verifies passes.
func verificationKeys(keys []any) jwt.VerificationKeySet {
	set := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(keys))}
	for i, k := range keys {
		set.Keys[i] = k
	}
	return set
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
