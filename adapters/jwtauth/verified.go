package jwtauth

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// verifiedTokensSize bounds the tokens a Verifier remembers: a few hundred
// bytes each, so a few MB at most; the least recently used goes first.
const verifiedTokensSize = 10_000

// verifiedTokens remembers tokens that passed Verify, until they expire
// or their key's source must be asked again.
//
// Why that is exact and not an approximation: what Verify checks of a token
// is fixed by its bytes (the signature under a key of the Verifier, the
// issuer, the audience, the workspace and user claims) except the time and
// the keys. The time can only make a token that passed fail by passing its
// expiry (iat is checked against the past, which only moves away), so a
// token is forgotten at it (plus the leeway). The keyring is fixed for the
// process's life; a JWKS key can be removed, so a token it verified is
// forgotten when its set is due to be fetched again (JWKS.verifying), and
// a removed key is refused within the JWKS's refresh. Membership and
// revocation are not part of it: the Authenticator checks both on every
// request, after this cache (membership through its own cache, whose
// bound is documented in domain/workspaces; revocation in memory,
// domain/revocation).
type verifiedTokens struct {
	lru *lru.Cache[string, verifiedToken]
}

type verifiedToken struct {
	claims  Claims
	expires time.Time
}

func newVerifiedTokens(size int) *verifiedTokens {
	c, err := lru.New[string, verifiedToken](size)
	if err != nil {
		panic(err) // only for a size <= 0, a constant here
	}
	return &verifiedTokens{lru: c}
}

func (v *verifiedTokens) get(token string, now time.Time) (Claims, bool) {
	if v == nil {
		return Claims{}, false
	}
	t, ok := v.lru.Get(token)
	if !ok {
		return Claims{}, false
	}
	if !now.Before(t.expires) {
		v.lru.Remove(token)
		return Claims{}, false
	}
	return t.claims, true
}

func (v *verifiedTokens) put(token string, c Claims, expires time.Time) {
	if v == nil {
		return
	}
	v.lru.Add(token, verifiedToken{claims: c, expires: expires})
}
