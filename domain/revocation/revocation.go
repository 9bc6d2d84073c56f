// Package revocation refuses access tokens before their expiry: a token
// its bearer revoked (a logout), and the tokens of a member issued before
// an admin revoked them all ("sign out everywhere").
//
// The revocations live in a store the fleet shares (ports.TokenRevocations);
// each process holds them in memory and checks every request there, after
// the verified-token cache, so no request reads the store. The set is read
// again when it is older than the refresh interval: a revocation through
// another process is refused here within that interval (docs/api.md,
// "Revoking tokens"); one through this process at once.
package revocation

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DefaultRefresh is how often a process reads the revocations again, and
// so how long another process's revocation may take to be refused here.
const DefaultRefresh = 5 * time.Second

// MaxRefresh bounds the refresh interval a deployment may choose.
const MaxRefresh = time.Minute

// Service revokes tokens and checks them against what is revoked.
type Service struct {
	store   ports.TokenRevocations
	verify  ports.TokenVerifier
	clock   ports.Clock
	refresh time.Duration
	// reads shares one read of the store among the requests that find
	// the set due at once.
	reads singleflight.Group

	mu       sync.RWMutex
	tokens   map[string]time.Time // revoked token id: until when
	cutoffs  map[member]time.Time // not before
	cursor   int64
	loadedAt time.Time // clock time the last read began; zero: never read
}

type member struct{ workspace, user uuid.UUID }

// NewService checks tokens against store, read again every refresh (<= 0:
// DefaultRefresh); verify reads the tokens revoked by their text.
func NewService(store ports.TokenRevocations, verify ports.TokenVerifier, clock ports.Clock, refresh time.Duration) *Service {
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	return &Service{
		store: store, verify: verify, clock: clock, refresh: refresh,
		tokens: map[string]time.Time{}, cutoffs: map[member]time.Time{},
	}
}

// Refresh is the interval the set is read again at.
func (s *Service) Refresh() time.Duration { return s.refresh }

// Check refuses t with domain.CodeTokenRevoked when it was revoked, or
// was issued before its user's cutoff (a token without iat then too). It
// reads the store first when the set is older than the refresh interval,
// and answers CodeUnavailable when that read fails: a set that old could
// let a revoked token through.
func (s *Service) Check(ctx context.Context, t model.AccessToken) error {
	if s.due() {
		if err := s.readShared(ctx); err != nil {
			return err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.tokens[t.ID]; ok {
		return domain.Errorf(domain.CodeTokenRevoked, "the access token was revoked; sign in again")
	}
	if nb, ok := s.cutoffs[member{t.WorkspaceID, t.UserID}]; ok && t.IssuedAt.Before(nb) {
		return domain.Errorf(domain.CodeTokenRevoked, "the access token was issued before its user's tokens were revoked; sign in again")
	}
	return nil
}

func (s *Service) due() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.loadedAt.IsZero() || s.clock.Now().Sub(s.loadedAt) >= s.refresh
}

// readShared is Read shared by the requests that need it at once, and
// theirs to leave: the read goes on for the others.
func (s *Service) readShared(ctx context.Context) error {
	read := s.reads.DoChan("read", func() (any, error) {
		return nil, s.Read(context.WithoutCancel(ctx))
	})
	select {
	case res := <-read:
		if res.Err != nil {
			return domain.Wrap(domain.CodeUnavailable, res.Err, "the token revocations could not be read")
		}
		return nil
	case <-ctx.Done():
		return domain.Wrap(domain.CodeUnavailable, context.Cause(ctx), "the request ended while the token revocations were read")
	}
}

// Read applies what was revoked since the last read, and forgets the
// revoked tokens that have expired. The background refresh calls it; a
// request calls it when the set is due.
func (s *Service) Read(ctx context.Context) error {
	s.mu.RLock()
	since := s.cursor
	s.mu.RUnlock()
	began := s.clock.Now()
	changes, next, err := s.store.Changes(ctx, since)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(changes)
	for id, until := range s.tokens {
		if until.Before(began) {
			delete(s.tokens, id)
		}
	}
	if next > s.cursor {
		s.cursor = next
	}
	if began.After(s.loadedAt) {
		s.loadedAt = began
	}
	return nil
}

// apply adds changes to the set (under mu).
func (s *Service) apply(changes model.Revocations) {
	for _, t := range changes.Tokens {
		s.tokens[t.ID] = t.ExpiresAt
	}
	for _, c := range changes.Cutoffs {
		k := member{c.WorkspaceID, c.UserID}
		if c.NotBefore.After(s.cutoffs[k]) {
			s.cutoffs[k] = c.NotBefore
		}
	}
}

// RevokeToken revokes token, the caller's own: its bearer token when
// token is the one it authenticated with, or another token of the same
// user and workspace (RFC 7009's revocation, without a client id). It is
// refused here at once and by every process within the refresh interval.
// Errors: CodeValidation when token is not a valid access token of this
// service (an expired one included: it is refused anyway), CodeForbidden
// when it is another user's or workspace's.
func (s *Service) RevokeToken(ctx context.Context, p model.Principal, token string) error {
	return s.revoke(ctx, token, func(t model.AccessToken) error {
		if p.APIKeyID != uuid.Nil || t.WorkspaceID != p.WorkspaceID || t.UserID != p.UserID {
			return domain.Errorf(domain.CodeForbidden, "only the user a token was issued to may revoke it")
		}
		return nil
	})
}

// RevokeTokenAsOperator revokes token whoever it was issued to: the
// operator's `once token revoke`. Errors: CodeValidation as RevokeToken.
func (s *Service) RevokeTokenAsOperator(ctx context.Context, token string) error {
	return s.revoke(ctx, token, func(model.AccessToken) error { return nil })
}

// revoke records token once it is verified and allowed says yes.
func (s *Service) revoke(ctx context.Context, token string, allowed func(model.AccessToken) error) error {
	t, err := s.verify.VerifyToken(ctx, token)
	if err != nil {
		if domain.IsCode(err, domain.CodeUnauthenticated) {
			return domain.Errorf(domain.CodeValidation, "token is not a valid access token of this service (an expired one is refused anyway)")
		}
		return err
	}
	if err := allowed(t); err != nil {
		return err
	}
	r := model.RevokedToken{ID: t.ID, ExpiresAt: t.ExpiresAt}
	if err := s.store.RevokeToken(ctx, r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(model.Revocations{Tokens: []model.RevokedToken{r}})
	return nil
}

// RevokeMemberTokens refuses every token of user in p's workspace issued
// before now ("sign out everywhere"), whether or not user is a member now,
// and returns the first instant a token must be issued at to pass: the
// next whole second, as iat counts whole seconds (a token issued in the
// second of the revocation may be older than it). Admins only
// (CodeForbidden).
func (s *Service) RevokeMemberTokens(ctx context.Context, p model.Principal, user uuid.UUID) (time.Time, error) {
	if !p.Allows(model.ScopeMembersWrite) {
		return time.Time{}, domain.Errorf(domain.CodeForbidden, "only a workspace admin may revoke a member's tokens")
	}
	if user == uuid.Nil {
		return time.Time{}, domain.Errorf(domain.CodeValidation, "user_id must be a non-nil UUID")
	}
	c := model.TokenCutoff{WorkspaceID: p.WorkspaceID, UserID: user, NotBefore: s.clock.Now().Truncate(time.Second).Add(time.Second)}
	if err := s.store.RevokeTokensBefore(ctx, c); err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(model.Revocations{Cutoffs: []model.TokenCutoff{c}})
	return c.NotBefore, nil
}

// Sweep deletes the revoked tokens of store that have expired by clock,
// batch (> 0) at a time, and says how many went: the maintenance of every
// process runs it, whether it checks tokens or not.
func Sweep(ctx context.Context, store ports.TokenRevocations, clock ports.Clock, batch int) (int, error) {
	now, total := clock.Now(), 0
	for {
		n, err := store.SweepExpired(ctx, now, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
