package main

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/pgtest"
)

// `once bootstrap` gives a login role the password its variable holds, as
// a SCRAM-SHA-256 verifier, and leaves the other role's as it was. (That
// the roles then log in with them is adapters/postgres's test, on a server
// that asks for passwords.)
func TestBootstrapSetsThePasswordsOfItsVariables(t *testing.T) {
	db := pgtest.New(t) // its roles exist, without passwords
	t.Setenv(appPasswordVar, "bootstrap-test-app-password")
	out, err := execute(t, "bootstrap", "--superuser-url", pgtest.SuperuserDSN(),
		"--database", db.Name, "--owner", db.OwnerRole, "--app", db.AppRole)
	require.NoError(t, err, out)
	assert.NotContains(t, out, "bootstrap-test-app-password")

	super, err := sql.Open("pgx", pgtest.SuperuserDSN())
	require.NoError(t, err)
	defer super.Close()
	password := func(role string) sql.NullString {
		var p sql.NullString
		require.NoError(t, super.QueryRowContext(t.Context(), `SELECT rolpassword FROM pg_catalog.pg_authid WHERE rolname = $1`, role).Scan(&p))
		return p
	}
	app := password(db.AppRole)
	require.True(t, app.Valid, "the app role has a password")
	assert.Regexp(t, `^SCRAM-SHA-256\$4096:`, app.String)
	assert.False(t, password(db.OwnerRole).Valid, "the owner's variable is unset: its password is left as it was")
}
