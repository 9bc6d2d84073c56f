package jwtauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/testsupport/testkit"
)

const (
	idpIssuer   = "https://idp.example/"
	idpAudience = "once-api"
)

// idp is an identity provider in the test: its signing keys, generated
// here, and the JWKS it serves, which the test edits.
type idp struct {
	t       *testing.T
	mu      sync.Mutex
	keys    map[string]jwkset.JWKMarshal
	fetches atomic.Int64
	server  *httptest.Server
}

func newIDP(t *testing.T) *idp {
	p := &idp{t: t, keys: map[string]jwkset.JWKMarshal{}}
	p.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		set := jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{}}
		for _, k := range p.keys {
			set.Keys = append(set.Keys, k)
		}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(p.server.Close)
	return p
}

// publish adds the public half of key to the JWKS under kid.
func (p *idp) publish(kid string, key crypto.PublicKey) {
	p.t.Helper()
	jwk, err := jwkset.NewJWKFromKey(key, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid, USE: jwkset.UseSig}})
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.keys[kid] = jwk.Marshal()
	p.mu.Unlock()
}

func (p *idp) withdraw(kid string) {
	p.mu.Lock()
	delete(p.keys, kid)
	p.mu.Unlock()
}

// newIDPVerifier verifies p's tokens, with ring too when not nil, on clk.
func newIDPVerifier(t *testing.T, p *idp, clk *testkit.ManualClock, ring *Keyring) (*Verifier, *JWKS) {
	t.Helper()
	jwks, err := NewJWKS(JWKSOptions{URLs: []string{p.server.URL}, Refresh: 5 * time.Minute, MinRefresh: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	jwks.now = clk.Now
	if err := jwks.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(VerifierOptions{Keyring: ring, JWKS: jwks, Issuer: idpIssuer, Audience: idpAudience, Leeway: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v.now = clk.Now
	return v, jwks
}

func idpClaims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss": idpIssuer,
		"aud": []string{idpAudience, "another-api"},
		"sub": user.String(),
		"wsp": workspace.String(),
		"iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(),
	}
}

func signKID(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	token := jwt.NewWithClaims(method, claims)
	if kid != "" {
		token.Header["kid"] = kid
	}
	s, err := token.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type idpKeys struct {
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	ed      ed25519.PrivateKey
	rsaPEM  []byte // the RSA public key as an attacker would use it for HS256
	rsaJWKN []byte
}

func generateKeys(t *testing.T) idpKeys {
	t.Helper()
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&r.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return idpKeys{rsa: r, ec: e, ed: ed, rsaPEM: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), rsaJWKN: r.N.Bytes()}
}

func wantRefused(t *testing.T, v *Verifier, token, why string) {
	t.Helper()
	if c, err := v.Verify(t.Context(), token); !domain.IsCode(err, domain.CodeUnauthenticated) {
		t.Fatalf("%s: Verify = %+v, %v; want %s", why, c, err, domain.CodeUnauthenticated)
	}
}

func wantAccepted(t *testing.T, v *Verifier, token, why string) {
	t.Helper()
	c, err := v.Verify(t.Context(), token)
	if err != nil {
		t.Fatalf("%s: Verify: %v", why, err)
	}
	if c.WorkspaceID != workspace || c.UserID != user {
		t.Fatalf("%s: Verify = %+v", why, c)
	}
}

// Tokens of an identity provider: RS256, ES256 and EdDSA under the keys its
// JWKS publishes pass; every other token is refused.
func TestJWKSVerify(t *testing.T) {
	keys := generateKeys(t)
	p := newIDP(t)
	p.publish("rsa", &keys.rsa.PublicKey)
	p.publish("ec", &keys.ec.PublicKey)
	p.publish("ed", keys.ed.Public())
	clk := testkit.NewManualClock()
	v, _ := newIDPVerifier(t, p, clk, nil)
	now := clk.Now()

	wantAccepted(t, v, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, idpClaims(now)), "RS256")
	wantAccepted(t, v, signKID(t, jwt.SigningMethodES256, "ec", keys.ec, idpClaims(now)), "ES256")
	wantAccepted(t, v, signKID(t, jwt.SigningMethodEdDSA, "ed", keys.ed, idpClaims(now)), "EdDSA")
	single := idpClaims(now)
	single["aud"] = idpAudience // a single audience is a string
	wantAccepted(t, v, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, single), "aud as a string")
	skewed := idpClaims(now)
	skewed["exp"] = now.Add(-10 * time.Second).Unix()
	wantAccepted(t, v, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, skewed), "expired within the leeway")

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(name string, value any) jwt.MapClaims {
		c := idpClaims(now)
		c[name] = value
		return c
	}
	without := func(name string) jwt.MapClaims {
		c := idpClaims(now)
		delete(c, name)
		return c
	}
	unsigned := signKID(t, jwt.SigningMethodNone, "rsa", jwt.UnsafeAllowNoneSignatureType, idpClaims(now))
	cases := map[string]string{
		"wrong aud":                     signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, with("aud", "another-api")),
		"no aud":                        signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, without("aud")),
		"wrong iss":                     signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, with("iss", "https://evil.example/")),
		"expired":                       signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, with("exp", now.Add(-time.Minute).Unix())),
		"no exp":                        signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, without("exp")),
		"not yet valid":                 signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, with("nbf", now.Add(time.Hour).Unix())),
		"unknown key with a known kid":  signKID(t, jwt.SigningMethodRS256, "rsa", other, idpClaims(now)),
		"alg none":                      unsigned,
		"HS256 with the PEM public key": signKID(t, jwt.SigningMethodHS256, "rsa", keys.rsaPEM, idpClaims(now)),
		"HS256 with the JWK modulus":    signKID(t, jwt.SigningMethodHS256, "rsa", keys.rsaJWKN, idpClaims(now)),
		"HS256 with no kid":             signKID(t, jwt.SigningMethodHS256, "", keys.rsaPEM, idpClaims(now)),
		"ES256 under the RSA key's kid": signKID(t, jwt.SigningMethodES256, "rsa", keys.ec, idpClaims(now)),
		"RS256 under the EC key's kid":  signKID(t, jwt.SigningMethodRS256, "ec", keys.rsa, idpClaims(now)),
		"RS512 (not allowed)":           signKID(t, jwt.SigningMethodRS512, "rsa", keys.rsa, idpClaims(now)),
		"kid not a string":              signKID(t, jwt.SigningMethodRS256, "", keys.rsa, idpClaims(now)) + "x",
		"workspace not a uuid":          signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, with("wsp", "acme")),
		"user claim missing":            signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, without("sub")),
		"unknown kid":                   signKID(t, jwt.SigningMethodRS256, "ghost", other, idpClaims(now)),
		"EdDSA signed by a foreign key": signKID(t, jwt.SigningMethodEdDSA, "ed", func() ed25519.PrivateKey { _, k, _ := ed25519.GenerateKey(rand.Reader); return k }(), idpClaims(now)),
		"tampered claims, RS256 kept":   retarget(t, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, idpClaims(now)), with("wsp", uuid.NewString())),
		"HS256 with no keyring":         signKID(t, jwt.SigningMethodHS256, "", secret, idpClaims(now)),
	}
	for name, token := range cases {
		t.Run(name, func(t *testing.T) { wantRefused(t, v, token, name) })
	}

	// With a keyring too, HS256 is allowed, but only under the ring's
	// secrets: the public key as a secret still fails.
	withRing, _ := newIDPVerifier(t, p, clk, ring(t, Secret{ID: "hs", Key: secret}))
	wantAccepted(t, withRing, signKID(t, jwt.SigningMethodHS256, "hs", secret, idpClaims(now)), "HS256 under the ring")
	wantRefused(t, withRing, signKID(t, jwt.SigningMethodHS256, "rsa", keys.rsaPEM, idpClaims(now)), "HS256 with the public key, kid of the JWKS")
	wantRefused(t, withRing, signKID(t, jwt.SigningMethodHS256, "", keys.rsaPEM, idpClaims(now)), "HS256 with the public key, no kid")
}

func kidNumber(t *testing.T, key *rsa.PrivateKey, claims jwt.MapClaims) string {
	t.Helper()
	token := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	token.Header["kid"] = 42
	s, err := token.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// retarget swaps token's payload for claims, keeping its header and
// signature.
func retarget(t *testing.T, token string, claims jwt.MapClaims) string {
	t.Helper()
	parts := splitToken(t, token)
	return parts[0] + "." + jwtSegment(t, claims) + "." + parts[2]
}

func splitToken(t *testing.T, token string) []string {
	t.Helper()
	var parts []string
	start := 0
	for i := range len(token) {
		if token[i] == '.' {
			parts = append(parts, token[start:i])
			start = i + 1
		}
	}
	parts = append(parts, token[start:])
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	return parts
}

// The key set follows the identity provider without a restart: a token
// naming an unknown kid fetches the set again, at most once per MinRefresh
// however many ask; a key added is found so; a key removed is refused once
// the set is fetched again (every Refresh), the tokens it verified included.
func TestJWKSRotation(t *testing.T) {
	keys := generateKeys(t)
	p := newIDP(t)
	p.publish("rsa", &keys.rsa.PublicKey)
	clk := testkit.NewManualClock()
	v, jwks := newIDPVerifier(t, p, clk, nil)
	now := clk.Now()
	old := signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, idpClaims(now))
	wantAccepted(t, v, old, "the published key")
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d after the start, want 1", n)
	}

	// Unknown kids: one fetch per MinRefresh, shared by concurrent requests.
	ghost := signKID(t, jwt.SigningMethodES256, "ghost", keys.ec, idpClaims(now))
	wantRefused(t, v, ghost, "unknown kid, the set just fetched")
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d: an unknown kid fetched within MinRefresh of the last fetch", n)
	}
	clk.Advance(30 * time.Second)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { wantRefused(t, v, ghost, "unknown kid after a fetch") })
	}
	wg.Wait()
	if n := p.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d after 20 concurrent unknown kids, want 2 (one more)", n)
	}

	// A key added: found once MinRefresh has passed since the last fetch.
	p.publish("ec", &keys.ec.PublicKey)
	added := signKID(t, jwt.SigningMethodES256, "ec", keys.ec, idpClaims(now))
	wantRefused(t, v, added, "a new key within MinRefresh of the last fetch")
	clk.Advance(30 * time.Second)
	wantAccepted(t, v, added, "a new key, fetched on its unknown kid")
	if n := p.fetches.Load(); n != 3 {
		t.Fatalf("fetches = %d, want 3", n)
	}

	// A key removed: still trusted until the set is due again, then refused,
	// though the token it verified is remembered.
	p.withdraw("rsa")
	wantAccepted(t, v, old, "the removed key before the refresh bound")
	clk.Advance(5 * time.Minute)
	if err := jwks.Refresh(t.Context()); err != nil { // Run's tick
		t.Fatal(err)
	}
	wantRefused(t, v, old, "a token of the removed key after the refresh")
	wantRefused(t, v, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, idpClaims(clk.Now())), "a new token of the removed key")
	wantAccepted(t, v, added, "the key still published")
}

// A provider's outage keeps the keys it last served: nobody is logged out.
func TestJWKSKeepsKeysWhenTheFetchFails(t *testing.T) {
	keys := generateKeys(t)
	p := newIDP(t)
	p.publish("rsa", &keys.rsa.PublicKey)
	clk := testkit.NewManualClock()
	v, jwks := newIDPVerifier(t, p, clk, nil)
	p.server.Close()
	clk.Advance(time.Minute)
	if err := jwks.Refresh(t.Context()); err == nil {
		t.Fatal("Refresh of a closed server succeeded")
	}
	wantAccepted(t, v, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, idpClaims(clk.Now())), "the last keys after a failed fetch")
}

// The workspace and the user are read from the claims configured.
func TestVerifyConfiguredClaims(t *testing.T) {
	keys := generateKeys(t)
	p := newIDP(t)
	p.publish("rsa", &keys.rsa.PublicKey)
	clk := testkit.NewManualClock()
	v, _ := newIDPVerifier(t, p, clk, nil)
	v.opts.WorkspaceClaim, v.opts.UserClaim = "https://once.example/workspace", "once_user"
	c := idpClaims(clk.Now())
	c["sub"] = "auth0|12345" // the provider's own user id, not once's
	c["wsp"] = uuid.NewString()
	c["https://once.example/workspace"] = workspace.String()
	c["once_user"] = user.String()
	wantAccepted(t, v, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, c), "custom claims")
	delete(c, "once_user")
	wantRefused(t, v, signKID(t, jwt.SigningMethodRS256, "rsa", keys.rsa, c), "the custom user claim missing")
}
