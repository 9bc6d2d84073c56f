package main

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/pgtest"
)

func runToken(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCommand(t, tokenCmd(), args...)
}

// TestTokenRefusesDemoDefaultsOnPostgres: with DATABASE_URL set, a token
// for the demo workspace (which exists only on the embedded store) is
// refused; naming a workspace and user works.
func TestTokenRefusesDemoDefaultsOnPostgres(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://once_app@127.0.0.1:1/none")
	t.Setenv("ONCE_JWT_SECRET", "token-test-jwt-secret-0123456789abcdef012345")
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", "t1:bWVtYmVyLXRlc3QtaWRlbXBvdGVuY3ktc2VjcmV0LTAxMjM0NQ==")
	t.Setenv("ONCE_CREDENTIAL_KEYS", "t1:bWVtYmVyLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=")

	_, err := runToken(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--workspace and --user")
	_, err = runToken(t, "--workspace", uuid.NewString())
	require.Error(t, err, "the demo user is refused too")

	out, err := runToken(t, "--workspace", uuid.NewString(), "--user", uuid.NewString())
	require.NoError(t, err)
	assert.Equal(t, 3, len(strings.Split(strings.TrimSpace(out), ".")), "a JWT")
}

// TestTokenUsesTheDemoOnTheEmbeddedStore: without DATABASE_URL the demo
// defaults are what `make run` prepared.
func TestTokenUsesTheDemoOnTheEmbeddedStore(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	out, err := runToken(t)
	require.NoError(t, err)
	assert.NotEmpty(t, strings.TrimSpace(out))
}

// TestTokenRevokeCommand: on PostgreSQL, the operator revokes one token,
// or every token of a member issued before now; the revocations are in
// the store every serve reads.
func TestTokenRevokeCommand(t *testing.T) {
	db := pgtest.New(t)
	t.Setenv("DATABASE_URL", db.AppDSN)
	t.Setenv("ONCE_JWT_SECRET", "token-test-jwt-secret-0123456789abcdef012345")
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", "t1:bWVtYmVyLXRlc3QtaWRlbXBvdGVuY3ktc2VjcmV0LTAxMjM0NQ==")
	t.Setenv("ONCE_CREDENTIAL_KEYS", "t1:bWVtYmVyLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=")
	ws, user := uuid.NewString(), uuid.NewString()
	token, err := runToken(t, "--workspace", ws, "--user", user)
	require.NoError(t, err)

	out, err := runToken(t, "revoke", "--token", strings.TrimSpace(token))
	require.NoError(t, err, out)
	_, err = runToken(t, "revoke", "--token", "not.a.token")
	require.Error(t, err, "not a token of this service")
	out, err = runToken(t, "revoke", "--workspace", ws, "--user", user)
	require.NoError(t, err, out)
	assert.Contains(t, out, "issued before")
	_, err = runToken(t, "revoke", "--workspace", ws)
	require.Error(t, err, "a workspace without a user")

	changes, _, err := postgres.NewTokenRevocations(db.App).Changes(t.Context(), 0)
	require.NoError(t, err)
	require.Len(t, changes.Tokens, 1)
	assert.True(t, strings.HasPrefix(changes.Tokens[0].ID, "jti:"), changes.Tokens[0].ID)
	require.Len(t, changes.Cutoffs, 1)
	assert.Equal(t, user, changes.Cutoffs[0].UserID.String())
	assert.Equal(t, ws, changes.Cutoffs[0].WorkspaceID.String())
}
