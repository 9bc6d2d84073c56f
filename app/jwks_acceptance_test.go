package app_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
)

// once serve with ONCE_JWKS_URLS takes its members' tokens from the
// identity provider, reading the user from the claim configured, beside
// its own HS256 tokens.
func TestServeAcceptsIdentityProviderTokens(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	jwk, err := jwkset.NewJWKFromKey(&key.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "k1", USE: jwkset.UseSig}})
	require.NoError(t, err)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{jwk.Marshal()}})
	}))
	t.Cleanup(idp.Close)

	cfg := apitest.Config("")
	cfg.JWKSURLs = idp.URL + "/.well-known/jwks.json"
	cfg.JWTIssuer = "https://idp.example/"
	cfg.JWTAudience = "once-api"
	cfg.JWTUserClaim = "once_user"
	s := apitest.Start(t, cfg, nil)

	sign := func(aud string) string {
		token := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
			"iss": "https://idp.example/", "aud": aud, "sub": "idp|42",
			"once_user": s.User.String(), "wsp": s.Workspace.String(),
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
		})
		token.Header["kid"] = "k1"
		signed, err := token.SignedString(key)
		require.NoError(t, err)
		return signed
	}
	read := func(token string) int {
		return s.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, map[string]string{"Authorization": "Bearer " + token}).Status
	}
	assert.Equal(t, http.StatusOK, read(sign("once-api")), "the provider's token")
	assert.Equal(t, http.StatusUnauthorized, read(sign("another-api")), "a token of the provider for another application")
	assert.Equal(t, http.StatusOK, read(s.Token), "once's own HS256 token beside")

	// The provider's token has no jti: its logout names it by its digest.
	revoked := sign("once-api")
	r := s.Do(t, http.MethodPost, "/v1/tokens/revoke", nil, map[string]string{"Authorization": "Bearer " + revoked})
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	assert.Equal(t, http.StatusUnauthorized, read(revoked), "the provider's token, revoked")
	assert.Equal(t, http.StatusOK, read(s.Token), "once's own token, not revoked")
}
