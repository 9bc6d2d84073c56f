package jwtauth

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
)

// Defaults of JWKSOptions.
const (
	// DefaultJWKSRefresh is how often the key sets are fetched again, and so
	// how long a key removed from one is still accepted.
	DefaultJWKSRefresh = 5 * time.Minute
	// DefaultJWKSMinRefresh is the least time between two fetches set off
	// by tokens naming an unknown kid: such tokens cost the identity
	// provider at most one request per this time, whoever sends them.
	DefaultJWKSMinRefresh = 30 * time.Second
	// maxJWKSBytes bounds a key set's body; real ones are a few kB.
	maxJWKSBytes = 1 << 20
	// minRSABits refuses the RSA keys too weak to trust (RFC 7518
	// section 3.3 asks 2048).
	minRSABits = 2048
	// jwksFetchTimeout bounds one fetch: a request waiting for a refresh
	// waits at most this long.
	jwksFetchTimeout = 5 * time.Second
)

// JWKSOptions configure a JWKS.
type JWKSOptions struct {
	// URLs are the key sets, each a JWKS document (RFC 7517 section 5).
	URLs []string
	// Refresh is how often every set is fetched again (Run); MinRefresh the
	// least time between fetches for an unknown kid. Zero: the defaults.
	Refresh, MinRefresh time.Duration
	// Client fetches; nil: one with a timeout of a few seconds.
	Client *http.Client
	Log    *slog.Logger
}

// JWKS holds the public keys of the identity providers: fetched from their
// URLs, kept in memory, fetched again every Refresh (Run), and at once for a
// token naming a kid no set holds, but no more than once per MinRefresh, so
// forged kids never turn into a fetch per request.
//
// A set that cannot be fetched keeps its last keys (a provider's outage
// must not log everyone out); a key it removes is refused within Refresh of
// its removal while it answers.
type JWKS struct {
	urls       []string
	refresh    time.Duration
	minRefresh time.Duration
	client     *http.Client
	log        *slog.Logger
	now        func() time.Time

	mu   sync.RWMutex
	sets []keySet // by URL, in the order of urls

	// fetching serialises fetches; lastTry is when the last one began.
	fetching sync.Mutex
	lastTry  time.Time
}

// keySet is what one URL answered last.
type keySet struct {
	keys    []publicKey
	fetched time.Time // zero: never fetched
}

// publicKey is one usable key of a set: its kid, the algorithm its JWK
// names (empty: any its type fits) and the key itself.
type publicKey struct {
	kid string
	alg string
	key crypto.PublicKey
}

// NewJWKS builds a JWKS for opts; nothing is fetched until Refresh or Run.
func NewJWKS(opts JWKSOptions) (*JWKS, error) {
	if len(opts.URLs) == 0 {
		return nil, errors.New("jwtauth: a JWKS needs at least one URL")
	}
	j := &JWKS{
		urls:       append([]string(nil), opts.URLs...),
		refresh:    cmp.Or(opts.Refresh, DefaultJWKSRefresh),
		minRefresh: cmp.Or(opts.MinRefresh, DefaultJWKSMinRefresh),
		client:     opts.Client,
		log:        opts.Log,
		now:        time.Now,
		sets:       make([]keySet, len(opts.URLs)),
	}
	if j.client == nil {
		j.client = &http.Client{Timeout: jwksFetchTimeout}
	}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	return j, nil
}

// Run fetches the sets now and then every Refresh until ctx ends.
func (j *JWKS) Run(ctx context.Context) {
	t := time.NewTicker(j.refresh)
	defer t.Stop()
	for {
		_ = j.Refresh(ctx) // logged
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh fetches every set now, whenever the last fetch was; the sets
// that answer replace their keys. It returns the failures, joined.
func (j *JWKS) Refresh(ctx context.Context) error {
	j.fetching.Lock()
	defer j.fetching.Unlock()
	return j.fetchLocked(ctx)
}

// fetchLocked fetches every set, j.fetching held.
func (j *JWKS) fetchLocked(ctx context.Context) error {
	j.lastTry = j.now()
	var errs []error
	for i, u := range j.urls {
		keys, err := j.fetch(ctx, u)
		if err != nil {
			j.log.Warn("cannot fetch a JWKS: its last keys stay in use", slog.String("component", "jwtauth"), slog.String("url", u), slog.Any("error", err))
			errs = append(errs, fmt.Errorf("%s: %w", u, err))
			continue
		}
		j.mu.Lock()
		j.sets[i] = keySet{keys: keys, fetched: j.now()}
		j.mu.Unlock()
	}
	return errors.Join(errs...)
}

// fetch reads one set, keeping the keys once can verify with: signing
// keys ("use" sig or absent) of the types of the algorithms accepted.
// Others (encryption keys, unknown types) are skipped, not an error: a
// provider's set often holds some.
func (j *JWKS) fetch(ctx context.Context, url string) ([]publicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("the key set is over %d bytes", maxJWKSBytes)
	}
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("not a JWKS: %w", err)
	}
	keys := make([]publicKey, 0, len(set.Keys))
	for _, m := range set.Keys {
		if m.USE != "" && m.USE != jwkset.UseSig {
			continue
		}
		// Private: false reads the public part only, whatever the set holds.
		jwk, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{Private: false}, jwkset.JWKValidateOptions{})
		if err != nil {
			j.log.Debug("a JWKS key is skipped", slog.String("component", "jwtauth"), slog.String("url", url), slog.String("kid", m.KID), slog.Any("error", err))
			continue
		}
		if key, ok := usable(jwk.Key()); ok {
			keys = append(keys, publicKey{kid: m.KID, alg: m.ALG.String(), key: key})
		}
	}
	return keys, nil
}

// usable is key if it is of a type an accepted algorithm verifies with.
func usable(key any) (crypto.PublicKey, bool) {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return k, k.N.BitLen() >= minRSABits
	case *ecdsa.PublicKey:
		return k, k.Curve == elliptic.P256()
	case ed25519.PublicKey:
		return k, true
	}
	return nil, false
}

// verifying is the key for a token signed with alg, with kid when hasKID,
// and the time after which what it says must be checked again (the
// verified-token memory keeps no answer past it: see verified.go).
//
// A kid no set holds sets off a fetch unless one began less than MinRefresh
// ago; concurrent requests for it share that fetch.
func (j *JWKS) verifying(ctx context.Context, alg, kid string, hasKID bool) (any, time.Time, error) {
	if key, until, ok := j.find(alg, kid, hasKID); ok {
		return key, until, nil
	}
	j.fetching.Lock()
	if key, until, ok := j.find(alg, kid, hasKID); ok { // fetched meanwhile
		j.fetching.Unlock()
		return key, until, nil
	}
	if j.now().Sub(j.lastTry) < j.minRefresh {
		j.fetching.Unlock()
		return nil, time.Time{}, errors.New("no key of the identity provider has this kid")
	}
	fetchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksFetchTimeout)
	_ = j.fetchLocked(fetchCtx) // logged; the old keys are still there
	cancel()
	j.fetching.Unlock()
	if key, until, ok := j.find(alg, kid, hasKID); ok {
		return key, until, nil
	}
	return nil, time.Time{}, errors.New("no key of the identity provider has this kid")
}

// find looks kid up in the sets held: the key named kid that fits alg, or
// without a kid every key that fits alg.
func (j *JWKS) find(alg, kid string, hasKID bool) (any, time.Time, bool) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	var all []any
	for _, set := range j.sets {
		until := set.fetched.Add(j.refresh)
		for _, k := range set.keys {
			if !fits(k, alg) {
				continue
			}
			if hasKID && k.kid == kid {
				return k.key, until, true
			}
			if !hasKID {
				all = append(all, k.key)
			}
		}
	}
	if len(all) == 0 {
		return nil, time.Time{}, false
	}
	// Keys without a kid are rare (a set of one): remember nothing.
	return verificationKeys(all), time.Time{}, true
}

// fits says whether key may verify a token signed with alg: its type is
// the algorithm's, and the JWK names no other algorithm.
func fits(k publicKey, alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch k.key.(type) {
	case *rsa.PublicKey:
		return alg == "RS256"
	case *ecdsa.PublicKey:
		return alg == "ES256"
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}
