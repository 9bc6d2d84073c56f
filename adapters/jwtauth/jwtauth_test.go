package jwtauth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
)

var (
	secret    = []byte("0123456789abcdef0123456789abcdef")
	issuer    = "once-test"
	workspace = uuid.MustParse("0d7c1c7e-7f4a-4b43-9f5e-1d0f2a3b4c5d")
	user      = uuid.MustParse("8f42b1a6-3c1e-4e7b-9d2a-5f0e6c7d8b9a")
)

func newPair(t *testing.T) (*Issuer, *Verifier) {
	t.Helper()
	iss, err := NewIssuer(ring(t, Secret{Key: secret}), IssuerOptions{Issuer: issuer, TTL: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ver, err := NewVerifier(VerifierOptions{Keyring: ring(t, Secret{Key: secret}), Issuer: issuer})
	if err != nil {
		t.Fatal(err)
	}
	return iss, ver
}

func ring(t *testing.T, secrets ...Secret) *Keyring {
	t.Helper()
	r, err := NewKeyring(secrets...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sign makes a token with arbitrary claims and method, for the cases Issue
// refuses to produce.
func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	token, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func validClaims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss": issuer,
		"sub": user.String(),
		"wsp": workspace.String(),
		"iat": now.Unix(),
		"exp": now.Add(time.Minute).Unix(),
	}
}

func TestIssueVerify(t *testing.T) {
	iss, ver := newPair(t)
	token, err := iss.Issue(workspace, user)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ver.Verify(t.Context(), token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.WorkspaceID != workspace || got.UserID != user {
		t.Fatalf("Verify = %+v", got)
	}
	// A hand-made token with the same claims verifies too: the wire format
	// is the contract.
	if _, err := ver.Verify(t.Context(), sign(t, jwt.SigningMethodHS256, secret, validClaims())); err != nil {
		t.Fatalf("hand-made token: %v", err)
	}
}

// Revocation names a token by its jti, which each issued token has of its
// own, or by its digest when it has none; iat and exp (plus the leeway)
// come with it.
func TestVerifiedTokenIDs(t *testing.T) {
	iss, ver := newPair(t)
	first, _ := iss.Issue(workspace, user)
	second, _ := iss.Issue(workspace, user)
	a, errA := ver.Verify(t.Context(), first)
	b, errB := ver.Verify(t.Context(), second)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if !strings.HasPrefix(a.TokenID, "jti:") || a.TokenID == b.TokenID {
		t.Fatalf("issued token ids %q and %q: want a jti of each's own", a.TokenID, b.TokenID)
	}
	if a.IssuedAt.IsZero() || !a.ExpiresAt.After(a.IssuedAt) {
		t.Fatalf("iat %s, accepted until %s", a.IssuedAt, a.ExpiresAt)
	}
	claims := validClaims()
	noJTI := sign(t, jwt.SigningMethodHS256, secret, claims)
	c, err := ver.Verify(t.Context(), noJTI)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(noJTI))
	if c.TokenID != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("a token without jti: id %q, want its digest", c.TokenID)
	}
	exp := time.Unix(claims["exp"].(int64), 0)
	if !c.ExpiresAt.Equal(exp.Add(ver.opts.Leeway)) {
		t.Fatalf("accepted until %s, want exp %s plus the leeway", c.ExpiresAt, exp)
	}
	if c.AccessToken().ID != c.TokenID || c.AccessToken().UserID != user {
		t.Fatalf("AccessToken() = %+v", c.AccessToken())
	}
}

func TestIssuedTokenShape(t *testing.T) {
	iss, _ := newPair(t)
	fixed := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	iss.now = func() time.Time { return fixed }
	token, _ := iss.Issue(workspace, user)
	claims := jwt.MapClaims{}
	parsed, _, err := jwt.NewParser().ParseUnverified(token, claims)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Method.Alg() != "HS256" {
		t.Fatalf("alg = %s", parsed.Method.Alg())
	}
	if claims["sub"] != user.String() || claims["wsp"] != workspace.String() || claims["iss"] != issuer {
		t.Fatalf("claims = %v", claims)
	}
	if exp, _ := claims.GetExpirationTime(); !exp.Time.Equal(fixed.Add(15 * time.Minute)) {
		t.Fatalf("exp = %v", exp)
	}
}

func TestVerifyExpired(t *testing.T) {
	iss, ver := newPair(t)
	iss.now = func() time.Time { return time.Now().Add(-time.Hour) }
	token, _ := iss.Issue(workspace, user)
	_, err := ver.Verify(t.Context(), token)
	if !domain.IsCode(err, domain.CodeUnauthenticated) {
		t.Fatalf("err = %v, want %s", err, domain.CodeUnauthenticated)
	}
	var de *domain.Error
	if !errors.As(err, &de) || !strings.Contains(de.Message, "expired") {
		t.Fatalf("err = %v, want a message saying the token expired", err)
	}

	// The verifier's clock decides.
	fresh, _ := newIssuerNow(t, time.Now())
	token, _ = fresh.Issue(workspace, user)
	ver.now = func() time.Time { return time.Now().Add(time.Hour) }
	if _, err := ver.Verify(t.Context(), token); !domain.IsCode(err, domain.CodeUnauthenticated) {
		t.Fatalf("err = %v, want %s", err, domain.CodeUnauthenticated)
	}
}

func newIssuerNow(t *testing.T, now time.Time) (*Issuer, error) {
	t.Helper()
	iss, err := NewIssuer(ring(t, Secret{Key: secret}), IssuerOptions{Issuer: issuer, TTL: 15 * time.Minute})
	if err != nil {
		return nil, err
	}
	iss.now = func() time.Time { return now }
	return iss, nil
}

func TestVerifyRefuses(t *testing.T) {
	_, ver := newPair(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	without := func(name string) jwt.MapClaims {
		c := validClaims()
		delete(c, name)
		return c
	}
	with := func(name string, value any) jwt.MapClaims {
		c := validClaims()
		c[name] = value
		return c
	}
	otherIssuer, _ := NewIssuer(ring(t, Secret{Key: secret}), IssuerOptions{Issuer: "someone-else", TTL: time.Minute})
	otherToken, _ := otherIssuer.Issue(workspace, user)
	goodToken := sign(t, jwt.SigningMethodHS256, secret, validClaims())
	parts := strings.Split(goodToken, ".")

	cases := map[string]string{
		"empty":              "",
		"garbage":            "not.a.jwt",
		"two parts":          parts[0] + "." + parts[1],
		"over-long":          goodToken + strings.Repeat("A", maxTokenLen),
		"wrong secret":       sign(t, jwt.SigningMethodHS256, []byte("ffffffffffffffffffffffffffffffff"), validClaims()),
		"alg none":           sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, validClaims()),
		"alg none unsigned":  "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." /* {"alg":"none","typ":"JWT"} */ + parts[1] + ".",
		"alg HS512":          sign(t, jwt.SigningMethodHS512, secret, validClaims()),
		"alg HS384":          sign(t, jwt.SigningMethodHS384, secret, validClaims()),
		"alg RS256":          sign(t, jwt.SigningMethodRS256, rsaKey, validClaims()),
		"tampered payload":   parts[0] + "." + jwtSegment(t, with("sub", uuid.NewString())) + "." + parts[2],
		"stripped signature": parts[0] + "." + parts[1] + ".",
		"missing exp":        sign(t, jwt.SigningMethodHS256, secret, without("exp")),
		"missing iss":        sign(t, jwt.SigningMethodHS256, secret, without("iss")),
		"wrong iss":          otherToken,
		"missing sub":        sign(t, jwt.SigningMethodHS256, secret, without("sub")),
		"missing wsp":        sign(t, jwt.SigningMethodHS256, secret, without("wsp")),
		"sub not a uuid":     sign(t, jwt.SigningMethodHS256, secret, with("sub", "alice")),
		"wsp not a uuid":     sign(t, jwt.SigningMethodHS256, secret, with("wsp", "acme")),
		"wsp not a string":   sign(t, jwt.SigningMethodHS256, secret, with("wsp", 42)),
		"nil user":           sign(t, jwt.SigningMethodHS256, secret, with("sub", uuid.Nil.String())),
		"nil workspace":      sign(t, jwt.SigningMethodHS256, secret, with("wsp", uuid.Nil.String())),
		"exp not a number":   sign(t, jwt.SigningMethodHS256, secret, with("exp", "tomorrow")),
		"issued in future":   sign(t, jwt.SigningMethodHS256, secret, with("iat", time.Now().Add(time.Hour).Unix())),
		"not yet valid":      sign(t, jwt.SigningMethodHS256, secret, with("nbf", time.Now().Add(time.Hour).Unix())),
	}
	for name, token := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ver.Verify(t.Context(), token)
			if !domain.IsCode(err, domain.CodeUnauthenticated) {
				t.Fatalf("Verify = %+v, %v; want %s", got, err, domain.CodeUnauthenticated)
			}
			if got != (Claims{}) {
				t.Fatalf("Verify returned claims %+v with an error", got)
			}
			if token != "" && strings.Contains(err.Error(), token) {
				t.Fatalf("error %q echoes the token", err)
			}
			for _, part := range strings.Split(token, ".") {
				if len(part) > 8 && strings.Contains(err.Error(), part) {
					t.Fatalf("error %q echoes part of the token", err)
				}
			}
		})
	}
}

// jwtSegment encodes claims as a JWT payload segment.
func jwtSegment(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	token := sign(t, jwt.SigningMethodHS256, []byte("unrelated-unrelated-unrelated-32"), claims)
	return strings.Split(token, ".")[1]
}

func TestConstructorsRefuse(t *testing.T) {
	if _, err := NewKeyring(Secret{Key: secret[:31]}); err == nil {
		t.Error("NewKeyring accepted a 31-byte secret")
	}
	if _, err := NewKeyring(); err == nil {
		t.Error("NewKeyring accepted no secret")
	}
	if _, err := NewKeyring(Secret{ID: "a", Key: secret}, Secret{Key: secret}); err == nil {
		t.Error("NewKeyring accepted a secret without an id beside another")
	}
	if _, err := NewKeyring(Secret{ID: "a", Key: secret}, Secret{ID: "a", Key: secret}); err == nil {
		t.Error("NewKeyring accepted an id twice")
	}
	r := ring(t, Secret{Key: secret})
	if _, err := NewIssuer(r, IssuerOptions{Issuer: "", TTL: time.Minute}); err == nil {
		t.Error("NewIssuer accepted an empty issuer")
	}
	if _, err := NewVerifier(VerifierOptions{Keyring: r}); err == nil {
		t.Error("NewVerifier accepted an empty issuer")
	}
	if _, err := NewVerifier(VerifierOptions{Issuer: issuer}); err == nil {
		t.Error("NewVerifier accepted neither a keyring nor a JWKS")
	}
	if _, err := NewIssuer(r, IssuerOptions{Issuer: issuer, TTL: 0}); err == nil {
		t.Error("NewIssuer accepted a zero ttl")
	}
	if _, err := NewIssuer(nil, IssuerOptions{Issuer: issuer, TTL: time.Minute}); err == nil {
		t.Error("NewIssuer accepted no keyring")
	}
	iss, _ := newPair(t)
	if _, err := iss.Issue(uuid.Nil, user); err == nil {
		t.Error("Issue accepted a nil workspace")
	}
	if _, err := iss.Issue(workspace, uuid.Nil); err == nil {
		t.Error("Issue accepted a nil user")
	}
}

func TestSecretIsCopied(t *testing.T) {
	s := append([]byte(nil), secret...)
	iss, _ := NewIssuer(ring(t, Secret{Key: s}), IssuerOptions{Issuer: issuer, TTL: time.Minute})
	ver, _ := NewVerifier(VerifierOptions{Keyring: ring(t, Secret{Key: s}), Issuer: issuer})
	s[0] ^= 0xFF
	token, _ := iss.Issue(workspace, user)
	if _, err := ver.Verify(t.Context(), token); err != nil {
		t.Fatalf("changing the caller's slice changed the key: %v", err)
	}
}

// A remembered token is still refused once it expires, and a token that
// failed is not remembered.
func TestVerifiedTokenExpiresFromMemory(t *testing.T) {
	iss, ver := newPair(t)
	now := time.Now()
	iss.now = func() time.Time { return now }
	ver.now = func() time.Time { return now }
	token, err := iss.Issue(workspace, user)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second answer comes from memory
		c, err := ver.Verify(t.Context(), token)
		if err != nil || c.WorkspaceID != workspace || c.UserID != user {
			t.Fatalf("Verify = %+v, %v; want the token's claims", c, err)
		}
	}
	ver.now = func() time.Time { return now.Add(15 * time.Minute) }
	if _, err := ver.Verify(t.Context(), token); !domain.IsCode(err, domain.CodeUnauthenticated) {
		t.Fatalf("err = %v at the expiry, want %s", err, domain.CodeUnauthenticated)
	}

	tampered := token[:len(token)-2] + "xx"
	ver.now = func() time.Time { return now }
	for range 2 {
		if _, err := ver.Verify(t.Context(), tampered); !domain.IsCode(err, domain.CodeUnauthenticated) {
			t.Fatalf("err = %v for a tampered token, want %s", err, domain.CodeUnauthenticated)
		}
	}
}
