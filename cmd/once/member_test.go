package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/internal/pgtest"
)

// runOnce runs the workspace command with args and returns its output.
func runWorkspace(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := workspaceCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	cmd.SilenceUsage = true
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

// TestMemberCommands: on PostgreSQL, the operator adds, lists and removes
// members, and the last admin stays.
func TestMemberCommands(t *testing.T) {
	db := pgtest.New(t)
	t.Setenv("DATABASE_URL", db.AppDSN)
	t.Setenv("ONCE_JWT_SECRET", "member-test-jwt-secret-0123456789abcdef0123")
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", "t1:bWVtYmVyLXRlc3QtaWRlbXBvdGVuY3ktc2VjcmV0LTAxMjM0NQ==")
	t.Setenv("ONCE_CREDENTIAL_KEYS", "t1:bWVtYmVyLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=")

	admin, user := uuid.NewString(), uuid.NewString()
	out, err := runWorkspace(t, "create", "--name", "members", "--admin", admin)
	require.NoError(t, err, out)
	ws := strings.TrimSpace(out)

	out, err = runWorkspace(t, "member", "add", "--workspace", ws, "--user", user)
	require.NoError(t, err, out)
	assert.Equal(t, user+"\tmember\n", out)

	out, err = runWorkspace(t, "member", "list", "--workspace", ws)
	require.NoError(t, err, out)
	assert.Equal(t, admin+"\tadmin\n"+user+"\tmember\n", out)

	out, err = runWorkspace(t, "member", "remove", "--workspace", ws, "--user", user)
	require.NoError(t, err, out)
	_, err = runWorkspace(t, "member", "remove", "--workspace", ws, "--user", admin)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "last admin")

	out, err = runWorkspace(t, "member", "list", "--workspace", ws)
	require.NoError(t, err, out)
	assert.Equal(t, admin+"\tadmin\n", out)
}
