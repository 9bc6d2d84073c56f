package apikeys_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/keyring"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/workspaces"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

var (
	key1 = keyring.Key{ID: "k1", Bytes: bytes.Repeat([]byte{1}, 32)}
	key2 = keyring.Key{ID: "k2", Bytes: bytes.Repeat([]byte{2}, 32)}
)

// countingUoW counts the transactions it opens.
type countingUoW struct {
	ports.UnitOfWork
	transactions atomic.Int64
}

func (u *countingUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	u.transactions.Add(1)
	return u.UnitOfWork.Transact(ctx, ws, fn)
}

// world is one database, a workspace with an admin and a member, and a
// clock the services share.
type world struct {
	db     *memory.DB
	clock  *testkit.ManualClock
	admin  model.Principal
	member model.Principal
	logs   *bytes.Buffer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{db: memory.NewDB(), clock: testkit.NewManualClock(), logs: &bytes.Buffer{}}
	ws := workspaces.NewService(memory.NewUnitOfWork(w.db), w.clock)
	ctx := context.Background()
	adminID, memberID := uuid.New(), uuid.New()
	created, err := ws.Create(ctx, uuid.Nil, "w", adminID)
	require.NoError(t, err)
	w.admin, err = ws.Authorize(ctx, created.ID, adminID)
	require.NoError(t, err)
	_, err = ws.AddMember(ctx, w.admin, memberID, model.RoleMember)
	require.NoError(t, err)
	w.member, err = ws.Authorize(ctx, created.ID, memberID)
	require.NoError(t, err)
	return w
}

// process is a service as one process has it: its own cache (TTL 5 s on
// the shared clock) over the shared database, hashing with keys.
func (w *world) process(t *testing.T, keys ...keyring.Key) (*apikeys.Service, *countingUoW) {
	t.Helper()
	if len(keys) == 0 {
		keys = []keyring.Key{key1}
	}
	hasher, err := apikeys.NewHasher(keys)
	require.NoError(t, err)
	uow := &countingUoW{UnitOfWork: memory.NewUnitOfWork(w.db)}
	return apikeys.NewService(apikeys.Deps{
		UoW: uow, Directory: memory.NewAPIKeyDirectory(w.db), Hasher: hasher, Clock: w.clock, IDs: system.NewIDs(),
		Log: slog.New(slog.NewJSONHandler(w.logs, nil)), Cache: apikeys.CacheOptions{Size: 100, TTL: 5 * time.Second},
	}), uow
}

func create(t *testing.T, svc *apikeys.Service, uow ports.UnitOfWork, p model.Principal, scopes ...string) (apikeys.WithSecret, error) {
	t.Helper()
	return ports.Query(context.Background(), uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (apikeys.WithSecret, error) {
		return svc.Create(ctx, tx, p, apikeys.CreateCommand{Name: "ERP", Scopes: scopes})
	})
}

func TestAKeyIsShownOnceAndStoredAsAKeyedHash(t *testing.T) {
	w := newWorld(t)
	svc, uow := w.process(t)
	created, err := create(t, svc, uow, w.admin, "products:write", "media:read")
	require.NoError(t, err)
	assert.Regexp(t, "^"+apikeys.SecretPattern.String()+"$", created.Secret)
	assert.Equal(t, []model.Scope{model.ScopeMediaRead, model.ScopeProductsWrite}, created.Key.Scopes, "in the documented order")
	assert.True(t, strings.HasPrefix(created.Secret, apikeys.DisplayPrefix(created.Key)+"_"))

	stored, err := svc.Get(context.Background(), w.admin, created.Key.ID)
	require.NoError(t, err)
	assert.Equal(t, "k1", stored.HashKeyID)
	assert.Len(t, stored.Hash, 32)
	assert.NotContains(t, string(stored.Hash), created.Secret[len(apikeys.DisplayPrefix(stored))+1:])
	assert.Equal(t, w.admin.UserID, stored.CreatedBy)

	p, err := svc.Authenticate(context.Background(), created.Secret)
	require.NoError(t, err)
	assert.Equal(t, model.Principal{WorkspaceID: w.admin.WorkspaceID, UserID: w.admin.UserID, Role: model.RoleAdmin,
		APIKeyID: created.Key.ID, Scopes: created.Key.Scopes}, p)
	assert.True(t, p.Allows(model.ScopeMediaRead))
	assert.False(t, p.Allows(model.ScopeMediaWrite))

	assert.Contains(t, w.logs.String(), `"msg":"api key created"`)
	assert.Contains(t, w.logs.String(), `"by_user_id":"`+w.admin.UserID.String()+`"`)
	assert.NotContains(t, w.logs.String(), created.Secret)
}

func TestCreateRefusals(t *testing.T) {
	w := newWorld(t)
	svc, uow := w.process(t)
	for _, c := range []struct {
		name   string
		p      model.Principal
		scopes []string
		code   domain.Code
		field  string
	}{
		{"a member", w.member, []string{"media:read"}, domain.CodeForbidden, ""},
		{"no scopes", w.admin, nil, domain.CodeValidation, "scopes"},
		{"an unknown scope", w.admin, []string{"media:read", "media:admin"}, domain.CodeValidation, "scopes[1]"},
		{"a scope twice", w.admin, []string{"media:read", "media:read"}, domain.CodeValidation, "scopes[1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := create(t, svc, uow, c.p, c.scopes...)
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, c.code, de.Code)
			assert.Equal(t, c.field, de.Field)
		})
	}

	t.Run("a key makes no key with more than its own scopes", func(t *testing.T) {
		created, err := create(t, svc, uow, w.admin, "keys:write", "media:read")
		require.NoError(t, err)
		asKey, err := svc.Authenticate(context.Background(), created.Secret)
		require.NoError(t, err)
		_, err = create(t, svc, uow, asKey, "media:read")
		require.NoError(t, err)
		_, err = create(t, svc, uow, asKey, "media:read", "media:write")
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, domain.CodeForbidden, de.Code)
		assert.Equal(t, "scopes[1]", de.Field)
	})

	t.Run("a name of no characters", func(t *testing.T) {
		_, err := ports.Query(context.Background(), uow, w.admin.WorkspaceID, func(ctx context.Context, tx ports.Tx) (apikeys.WithSecret, error) {
			return svc.Create(ctx, tx, w.admin, apikeys.CreateCommand{Name: "  ", Scopes: []string{"media:read"}})
		})
		assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err))
	})

	t.Run("a key of an admin without keys:read lists none", func(t *testing.T) {
		created, err := create(t, svc, uow, w.admin, "media:read")
		require.NoError(t, err)
		asKey, err := svc.Authenticate(context.Background(), created.Secret)
		require.NoError(t, err)
		_, err = svc.List(context.Background(), asKey, ports.ListQuery{})
		assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
		_, err = svc.Revoke(context.Background(), asKey, created.Key.ID)
		assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	})

	t.Run("a member neither lists nor revokes", func(t *testing.T) {
		_, err := svc.List(context.Background(), w.member, ports.ListQuery{})
		assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
		_, err = svc.Revoke(context.Background(), w.member, uuid.New())
		assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	})
}

func TestWrongAndMalformedKeysAreRefused(t *testing.T) {
	w := newWorld(t)
	svc, uow := w.process(t)
	created, err := create(t, svc, uow, w.admin, "media:read")
	require.NoError(t, err)
	_, err = svc.Authenticate(context.Background(), created.Secret) // cached now
	require.NoError(t, err)
	last := created.Secret[len(created.Secret)-1]
	wrong := created.Secret[:len(created.Secret)-1] + map[bool]string{true: "A", false: "B"}[last != 'A']
	for name, token := range map[string]string{
		"same lookup id, wrong secret": wrong,
		"too short":                    created.Secret[:40],
		"unknown lookup id":            apikeys.Prefix + "zzzzzzzzzzzz" + created.Secret[len(apikeys.Prefix)+12:],
		"a character outside":          created.Secret[:30] + "-" + created.Secret[31:],
	} {
		_, err := svc.Authenticate(context.Background(), token)
		assert.Equal(t, domain.CodeUnauthenticated, domain.ErrorCode(err), name)
	}
}

func TestRevocationIsSeenHereAtOnceAndElsewhereWithinTheTTL(t *testing.T) {
	w := newWorld(t)
	here, uow := w.process(t)
	elsewhere, _ := w.process(t)
	created, err := create(t, here, uow, w.admin, "media:read")
	require.NoError(t, err)
	ctx := context.Background()
	for _, svc := range []*apikeys.Service{here, elsewhere} {
		_, err := svc.Authenticate(ctx, created.Secret)
		require.NoError(t, err)
	}

	revoked, err := here.Revoke(ctx, w.admin, created.Key.ID)
	require.NoError(t, err)
	assert.Equal(t, w.clock.Now(), revoked.RevokedAt)
	_, err = here.Authenticate(ctx, created.Secret)
	assert.Equal(t, domain.CodeUnauthenticated, domain.ErrorCode(err), "this process: at once")

	_, err = elsewhere.Authenticate(ctx, created.Secret)
	assert.NoError(t, err, "another process within the TTL: still remembered (the documented bound)")
	w.clock.Advance(5 * time.Second)
	_, err = elsewhere.Authenticate(ctx, created.Secret)
	assert.Equal(t, domain.CodeUnauthenticated, domain.ErrorCode(err), "another process after the TTL")
	assert.Contains(t, err.Error(), "revoked")

	again, err := here.Revoke(ctx, w.admin, created.Key.ID)
	require.NoError(t, err)
	assert.Equal(t, revoked.RevokedAt, again.RevokedAt, "revoking twice is once")
	assert.Contains(t, w.logs.String(), `"msg":"api key revoked"`)
}

func TestLastUseIsWrittenAtMostOnceAMinute(t *testing.T) {
	w := newWorld(t)
	svc, uow := w.process(t)
	created, err := create(t, svc, uow, w.admin, "media:read")
	require.NoError(t, err)
	ctx := context.Background()
	start := w.clock.Now()
	_, err = svc.Authenticate(ctx, created.Secret) // a read and the first use's write
	require.NoError(t, err)
	before := uow.transactions.Load()
	for range 4 { // 4 requests a second apart: the cache answers, nothing is written
		w.clock.Advance(time.Second)
		_, err := svc.Authenticate(ctx, created.Secret)
		require.NoError(t, err)
	}
	assert.Equal(t, before, uow.transactions.Load(), "no transaction for requests within the TTL and the minute")
	k, err := svc.Get(ctx, w.admin, created.Key.ID)
	require.NoError(t, err)
	assert.Equal(t, start, k.LastUsedAt)

	w.clock.Advance(time.Minute)
	_, err = svc.Authenticate(ctx, created.Secret)
	require.NoError(t, err)
	k, err = svc.Get(ctx, w.admin, created.Key.ID)
	require.NoError(t, err)
	assert.Equal(t, w.clock.Now(), k.LastUsedAt, "a minute on: written again")
}

func TestAKeyHashedUnderAnOlderKeyringKeyMovesToTheCurrentOne(t *testing.T) {
	w := newWorld(t)
	old, uow := w.process(t, key1)
	created, err := create(t, old, uow, w.admin, "media:read")
	require.NoError(t, err)

	rotated, _ := w.process(t, key2, key1)
	_, err = rotated.Authenticate(context.Background(), created.Secret)
	require.NoError(t, err, "the older key still checks")
	k, err := rotated.Get(context.Background(), w.admin, created.Key.ID)
	require.NoError(t, err)
	assert.Equal(t, "k2", k.HashKeyID, "moved at its use")

	retired, _ := w.process(t, key2)
	_, err = retired.Authenticate(context.Background(), created.Secret)
	assert.NoError(t, err, "the older key retired: the moved hash checks")
}
