package postgres_test

import (
	"testing"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/contract"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The console's sessions through the application role: no workspace set,
// no BYPASSRLS, the grant of sql/029 only.
func TestOperatorSessionsContract(t *testing.T) {
	db := pgtest.New(t)
	contract.OperatorSessions(t, postgres.NewOperatorSessions(db.App))
}
