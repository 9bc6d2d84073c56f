package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/pgcluster"
)

// scramOnly is a pg_hba.conf where the superuser is trusted (the test's
// bootstrap connects as it) and every other role must give its password.
const scramOnly = `local all postgres trust
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
`

// Bootstrap gives the login roles the passwords it is given, on a server
// that asks for them: each role logs in with its password and not with
// another, a second bootstrap with a new password changes it, and one
// without a password leaves it as it is. The server's log, which logs
// every statement, shows verifiers, never a password.
func TestBootstrapGivesTheLoginRolesTheirPasswords(t *testing.T) {
	t.Parallel()
	cluster := pgcluster.StartForTest(t, "log_statement=all")
	ctx := context.Background()
	require.NoError(t, os.WriteFile(filepath.Join(cluster.DataDir(), "pg_hba.conf"), []byte(scramOnly), 0o600))
	super, err := sql.Open("pgx", cluster.SuperuserDSN())
	require.NoError(t, err)
	defer super.Close()
	var reloaded bool
	require.NoError(t, super.QueryRowContext(ctx, `SELECT pg_reload_conf()`).Scan(&reloaded))
	require.True(t, reloaded)
	var rules int
	require.NoError(t, super.QueryRowContext(ctx, `SELECT count(*) FROM pg_hba_file_rules WHERE auth_method = 'scram-sha-256' AND error IS NULL`).Scan(&rules))
	require.Equal(t, 1, rules, "the server asks every role but the superuser for its password")

	cfg := postgres.BootstrapConfig{Database: "once_pw", OwnerRole: "once_pw_owner", AppRole: "once_pw_app",
		OwnerPassword: "owner-pass-1", AppPassword: "app-pass-1"}
	require.NoError(t, postgres.Bootstrap(ctx, cluster.SuperuserDSN(), cfg))
	login := func(role, password string) error {
		dsn := fmt.Sprintf("postgres://%s:%s@%s/once_pw?sslmode=disable", role, password, cluster.Addr())
		db, err := sql.Open("pgx", dsn)
		require.NoError(t, err)
		defer db.Close()
		return db.PingContext(ctx)
	}
	refused := func(err error) bool {
		var pgErr *pgconn.PgError
		return errors.As(err, &pgErr) && pgErr.Code == "28P01" // invalid_password
	}
	// The reload is a signal: wait until the server asks for passwords.
	deadline := time.Now().Add(30 * time.Second)
	for err := login("once_pw_app", "not-its-password"); !refused(err); err = login("once_pw_app", "not-its-password") {
		require.True(t, time.Now().Before(deadline), "the server still lets a wrong password in: %v", err)
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, login("once_pw_owner", "owner-pass-1"), "the owner logs in with its password")
	require.NoError(t, login("once_pw_app", "app-pass-1"), "the app role logs in with its password")
	require.True(t, refused(login("once_pw_app", "owner-pass-1")), "not with another")

	cfg.AppPassword = "app-pass-2"
	require.NoError(t, postgres.Bootstrap(ctx, cluster.SuperuserDSN(), cfg))
	require.NoError(t, login("once_pw_app", "app-pass-2"), "a new password replaces the old")
	require.True(t, refused(login("once_pw_app", "app-pass-1")), "the old one no longer works")

	cfg.OwnerPassword, cfg.AppPassword = "", ""
	require.NoError(t, postgres.Bootstrap(ctx, cluster.SuperuserDSN(), cfg))
	require.NoError(t, login("once_pw_owner", "owner-pass-1"), "a bootstrap without a password keeps the role's")
	require.NoError(t, login("once_pw_app", "app-pass-2"))

	serverLog, err := os.ReadFile(cluster.LogPath())
	require.NoError(t, err)
	require.Contains(t, string(serverLog), "PASSWORD 'SCRAM-SHA-256$", "the statements are logged")
	for _, password := range []string{"owner-pass-1", "app-pass-1", "app-pass-2"} {
		require.NotContains(t, string(serverLog), password, "the server saw a verifier, never the password")
	}

	cfg.AppPassword = "not ascii: é"
	require.Error(t, postgres.Bootstrap(ctx, cluster.SuperuserDSN(), cfg), "a password the server might prepare otherwise is refused")
}
