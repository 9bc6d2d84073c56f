package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/pgtest"
)

// runCommand runs cmd with args and returns what it printed.
func runCommand(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	cmd.SilenceUsage = true
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

// useTestDatabase points the commands at a new database with test
// secrets and the credential keyring keys.
func useTestDatabase(t *testing.T, keys string) {
	t.Helper()
	db := pgtest.New(t)
	t.Setenv("DATABASE_URL", db.AppDSN)
	t.Setenv("ONCE_JWT_SECRET", "member-test-jwt-secret-0123456789abcdef0123")
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", "t1:bWVtYmVyLXRlc3QtaWRlbXBvdGVuY3ktc2VjcmV0LTAxMjM0NQ==")
	t.Setenv("ONCE_CREDENTIAL_KEYS", keys)
}

func runWorkspace(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCommand(t, workspaceCmd(), args...)
}

// TestMemberCommands: on PostgreSQL, the operator adds, lists and removes
// members, and the last admin stays.
func TestMemberCommands(t *testing.T) {
	useTestDatabase(t, "t1:bWVtYmVyLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=")

	admin, user := uuid.NewString(), uuid.NewString()
	out, err := runWorkspace(t, "create", "--name", "members", "--admin", admin)
	require.NoError(t, err, out)
	ws := strings.TrimSpace(out)

	out, err = runWorkspace(t, "member", "add", "--workspace", ws, "--user", user)
	require.NoError(t, err, out)
	assert.Equal(t, user+"\tmember\n", out)

	out, err = runWorkspace(t, "member", "list", "--workspace", ws)
	require.NoError(t, err, out)
	want := []string{admin + "\tadmin", user + "\tmember"}
	slices.Sort(want) // members are listed in user id order
	assert.Equal(t, strings.Join(want, "\n")+"\n", out)

	out, err = runWorkspace(t, "member", "remove", "--workspace", ws, "--user", user)
	require.NoError(t, err, out)
	_, err = runWorkspace(t, "member", "remove", "--workspace", ws, "--user", admin)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "last admin")

	out, err = runWorkspace(t, "member", "list", "--workspace", ws)
	require.NoError(t, err, out)
	assert.Equal(t, admin+"\tadmin\n", out)
}
