package jwtauth

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// verifiedTokensSize bounds the tokens a Verifier remembers: a few hundred
// bytes each, so a few MB at most; the least recently used goes first.
const verifiedTokensSize = 10_000

// verifiedTokens remembers tokens that passed Verify, until they expire.
//
// Why that is exact and not an approximation: what Verify checks of a token
// is fixed by its bytes (the HS256 signature under the Verifier's one
// secret, the issuer, sub and wsp) except the time, and the time can only
// make a token that passed fail by passing its expiry (iat is checked
// against the past, which only moves away). So a token is remembered with
// its expiry and forgotten at it. Membership is not part of it: the
// Authenticator checks that on every request (through its own cache, whose
// bound is documented in domain/workspaces).
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
