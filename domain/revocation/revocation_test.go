package revocation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/revocation"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// tokens stands for the verifier: a token's text is its key here.
type tokens map[string]model.AccessToken

func (v tokens) VerifyToken(_ context.Context, token string) (model.AccessToken, error) {
	t, ok := v[token]
	if !ok {
		return model.AccessToken{}, domain.Errorf(domain.CodeUnauthenticated, "the access token is invalid")
	}
	return t, nil
}

// failingStore fails its reads while failing is set.
type failingStore struct {
	ports.TokenRevocations
	failing bool
}

func (f *failingStore) Changes(ctx context.Context, since int64) (model.Revocations, int64, error) {
	if f.failing {
		return model.Revocations{}, since, errors.New("store down")
	}
	return f.TokenRevocations.Changes(ctx, since)
}

type fixture struct {
	here, there *revocation.Service
	clock       *testkit.ManualClock
	store       *failingStore
	tokens      tokens
	admin       model.Principal
	member      model.Principal
}

// newFixture is two processes' services over one store and clock, and a
// workspace with an admin and a member.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		clock:  testkit.NewManualClockAt(time.Date(2030, 1, 2, 3, 4, 5, 500_000_000, time.UTC)),
		store:  &failingStore{TokenRevocations: memory.NewTokenRevocations()},
		tokens: tokens{},
	}
	ws := uuid.New()
	f.admin = model.Principal{WorkspaceID: ws, UserID: uuid.New(), Role: model.RoleAdmin}
	f.member = model.Principal{WorkspaceID: ws, UserID: uuid.New(), Role: model.RoleMember}
	f.here = revocation.NewService(f.store, f.tokens, f.clock, 5*time.Second)
	f.there = revocation.NewService(f.store, f.tokens, f.clock, 5*time.Second)
	return f
}

// issue makes a token of p issued now (iat, whole seconds) for an hour.
func (f *fixture) issue(p model.Principal) (string, model.AccessToken) {
	text := uuid.NewString()
	now := f.clock.Now()
	t := model.AccessToken{ID: "jti:" + text, WorkspaceID: p.WorkspaceID, UserID: p.UserID, IssuedAt: now.Truncate(time.Second), ExpiresAt: now.Add(time.Hour)}
	f.tokens[text] = t
	return text, t
}

func TestARevokedTokenIsRefusedHereAtOnceAndThereWithinTheRefresh(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	text, token := f.issue(f.member)
	_, other := f.issue(f.member)
	require.NoError(t, f.there.Check(ctx, token), "read by the other process before")

	require.NoError(t, f.here.RevokeToken(ctx, f.member, text))
	assert.Equal(t, domain.CodeTokenRevoked, domain.ErrorCode(f.here.Check(ctx, token)), "here at once")
	require.NoError(t, f.there.Check(ctx, token), "there, within the refresh")
	f.clock.Advance(5 * time.Second)
	assert.Equal(t, domain.CodeTokenRevoked, domain.ErrorCode(f.there.Check(ctx, token)), "there, once the refresh is due")
	assert.NoError(t, f.there.Check(ctx, other), "the member's other token")
	require.NoError(t, f.here.RevokeToken(ctx, f.member, text), "revoking twice")
}

func TestRevokingAMembersTokensRefusesTheOlderOnesOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, older := f.issue(f.member)
	noIAT := older
	noIAT.ID, noIAT.IssuedAt = "sha256:00", time.Time{}
	_, admins := f.issue(f.admin)

	notBefore, err := f.here.RevokeMemberTokens(ctx, f.admin, f.member.UserID)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2030, 1, 2, 3, 4, 6, 0, time.UTC), notBefore, "the next whole second")
	assert.Equal(t, domain.CodeTokenRevoked, domain.ErrorCode(f.here.Check(ctx, older)))
	assert.Equal(t, domain.CodeTokenRevoked, domain.ErrorCode(f.here.Check(ctx, noIAT)), "a token without iat cannot show it is newer")
	_, sameSecond := f.issue(f.member)
	assert.Equal(t, domain.CodeTokenRevoked, domain.ErrorCode(f.here.Check(ctx, sameSecond)), "issued in the second of the revocation")
	assert.NoError(t, f.here.Check(ctx, admins), "another user's")

	f.clock.Advance(5 * time.Second)
	assert.Equal(t, domain.CodeTokenRevoked, domain.ErrorCode(f.there.Check(ctx, older)), "there, after the refresh")
	_, newer := f.issue(f.member)
	assert.NoError(t, f.here.Check(ctx, newer))
	assert.NoError(t, f.there.Check(ctx, newer))
}

func TestWhoMayRevokeWhat(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.here.RevokeMemberTokens(ctx, f.member, f.admin.UserID)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err), "a member revoking an admin's tokens")
	_, err = f.here.RevokeMemberTokens(ctx, f.admin, uuid.Nil)
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err))

	adminsText, admins := f.issue(f.admin)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(f.here.RevokeToken(ctx, f.member, adminsText)), "another user's token")
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(f.here.RevokeToken(ctx, f.member, "garbage")))
	assert.NoError(t, f.here.Check(ctx, admins), "nothing was revoked")
	require.NoError(t, f.here.RevokeTokenAsOperator(ctx, adminsText), "the operator revokes anyone's")
	assert.Equal(t, domain.CodeTokenRevoked, domain.ErrorCode(f.here.Check(ctx, admins)))
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(f.here.RevokeTokenAsOperator(ctx, "garbage")))
}

func TestADueSetThatCannotBeReadRefusesWithUnavailable(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, token := f.issue(f.member)
	require.NoError(t, f.there.Check(ctx, token))
	f.store.failing = true
	require.NoError(t, f.there.Check(ctx, token), "not due yet: no read")
	f.clock.Advance(5 * time.Second)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(f.there.Check(ctx, token)), "due, and the read fails")
	f.store.failing = false
	assert.NoError(t, f.there.Check(ctx, token))
}

func TestTheSweepTakesExpiredTokensAndTheSetForgetsThem(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var revoked []model.AccessToken
	for range 5 {
		text, token := f.issue(f.member)
		require.NoError(t, f.here.RevokeToken(ctx, f.member, text))
		revoked = append(revoked, token)
	}
	n, err := revocation.Sweep(ctx, f.store, f.clock, 2)
	require.NoError(t, err)
	assert.Zero(t, n, "none expired yet")
	f.clock.Advance(time.Hour + time.Second)
	n, err = revocation.Sweep(ctx, f.store, f.clock, 2)
	require.NoError(t, err)
	assert.Equal(t, 5, n, "in batches of 2")
	for _, token := range revoked {
		assert.NoError(t, f.here.Check(ctx, token), "expired: the verifier refuses it, the set forgot it")
	}
}

// countingStore counts the reads of the revocations.
type countingStore struct {
	ports.TokenRevocations
	reads int
}

func (c *countingStore) Changes(ctx context.Context, since int64) (model.Revocations, int64, error) {
	c.reads++
	return c.TokenRevocations.Changes(ctx, since)
}

func TestChecksReadTheStoreOncePerRefreshNotPerRequest(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	store := &countingStore{TokenRevocations: memory.NewTokenRevocations()}
	s := revocation.NewService(store, f.tokens, f.clock, 5*time.Second)
	_, token := f.issue(f.member)
	for range 1000 {
		require.NoError(t, s.Check(ctx, token))
	}
	assert.Equal(t, 1, store.reads, "the first check reads; the others are answered from memory")
	f.clock.Advance(5 * time.Second)
	for range 1000 {
		require.NoError(t, s.Check(ctx, token))
	}
	assert.Equal(t, 2, store.reads, "one more read once the refresh is due")
}
