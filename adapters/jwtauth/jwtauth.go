// Package jwtauth issues and verifies the access tokens of once: HS256 JWTs
// that name a user (sub) and a workspace (wsp).
package jwtauth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

// MinSecretLen is the shortest HMAC secret accepted, in bytes (RFC 7518
// section 3.2: a key of at least the hash output size).
const MinSecretLen = 32

// maxTokenLen bounds the work a caller can ask of Verify; our tokens are a
// few hundred bytes.
const maxTokenLen = 8 << 10

// algorithm is the one signing method issued and accepted.
var algorithm = jwt.SigningMethodHS256

// Claims is what a verified token says about its bearer.
type Claims struct {
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
}

// tokenClaims is the wire form: sub = user id, wsp = workspace id.
type tokenClaims struct {
	WorkspaceID string `json:"wsp"`
	jwt.RegisteredClaims
}

// Issuer signs access tokens.
type Issuer struct {
	secret []byte
	issuer string
	ttl    time.Duration
	now    func() time.Time
}

// NewIssuer builds an Issuer that signs with secret (at least MinSecretLen
// bytes), names issuer as "iss", and lets tokens live for ttl (> 0).
func NewIssuer(secret []byte, issuer string, ttl time.Duration) (*Issuer, error) {
	if err := checkConfig(secret, issuer); err != nil {
		return nil, err
	}
	if ttl <= 0 {
		return nil, errors.New("jwtauth: the token lifetime must be positive")
	}
	return &Issuer{secret: clone(secret), issuer: issuer, ttl: ttl, now: time.Now}, nil
}

// Issue signs a token for user in workspace, valid from now for the ttl.
func (i *Issuer) Issue(workspace, user uuid.UUID) (string, error) {
	if workspace == uuid.Nil || user == uuid.Nil {
		return "", errors.New("jwtauth: a token needs a workspace and a user")
	}
	now := i.now()
	claims := tokenClaims{
		WorkspaceID: workspace.String(),
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.issuer,
			Subject:   user.String(),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(i.ttl)),
		},
	}
	token, err := jwt.NewWithClaims(algorithm, claims).SignedString(i.secret)
	if err != nil {
		return "", fmt.Errorf("jwtauth: sign: %w", err)
	}
	return token, nil
}

// Verifier checks access tokens.
type Verifier struct {
	secret []byte
	issuer string
	now    func() time.Time
	// verified remembers tokens that passed (verified.go): a client sends
	// the same token with every request, and checking it again was a tenth
	// of the service's CPU per write.
	verified *verifiedTokens
}

// NewVerifier builds a Verifier for tokens signed with secret (at least
// MinSecretLen bytes) by issuer.
func NewVerifier(secret []byte, issuer string) (*Verifier, error) {
	if err := checkConfig(secret, issuer); err != nil {
		return nil, err
	}
	return &Verifier{secret: clone(secret), issuer: issuer, now: time.Now, verified: newVerifiedTokens(verifiedTokensSize)}, nil
}

// Verify checks token's HS256 signature, its issuer, that it carries an
// expiry that has not passed, and that sub and wsp are UUIDs, and returns
// its claims. Any other algorithm, "none" included, is refused. Every failure
// is domain.CodeUnauthenticated; the message never echoes the token.
//
// A token that passed is remembered until its expiry (verified.go), so a
// repeated token costs a map lookup and a clock read.
func (v *Verifier) Verify(token string) (Claims, error) {
	if c, ok := v.verified.get(token, v.now()); ok {
		return c, nil
	}
	if token == "" {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "an access token is required")
	}
	if len(token) > maxTokenLen {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "the access token is invalid")
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims,
		func(*jwt.Token) (any, error) { return v.secret, nil },
		jwt.WithValidMethods([]string{algorithm.Alg()}),
		jwt.WithIssuer(v.issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithStrictDecoding(),
		jwt.WithTimeFunc(v.now),
	)
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return Claims{}, domain.Wrap(domain.CodeUnauthenticated, err, "the access token has expired")
		}
		return Claims{}, domain.Wrap(domain.CodeUnauthenticated, err, "the access token is invalid")
	}
	user, err := uuid.Parse(claims.Subject)
	if err != nil || user == uuid.Nil {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "the access token names no valid user")
	}
	workspace, err := uuid.Parse(claims.WorkspaceID)
	if err != nil || workspace == uuid.Nil {
		return Claims{}, domain.Errorf(domain.CodeUnauthenticated, "the access token names no valid workspace")
	}
	c := Claims{WorkspaceID: workspace, UserID: user}
	v.verified.put(token, c, claims.ExpiresAt.Time)
	return c, nil
}

func checkConfig(secret []byte, issuer string) error {
	if len(secret) < MinSecretLen {
		return fmt.Errorf("jwtauth: the signing secret is %d bytes; at least %d are required", len(secret), MinSecretLen)
	}
	if issuer == "" {
		return errors.New("jwtauth: the issuer is empty")
	}
	return nil
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
