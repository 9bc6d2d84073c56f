package postgres_test

import (
	"testing"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/contract"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The fleet's records through the application role: no workspace set, no
// BYPASSRLS, the grant of sql/020 only.
func TestDestinationStatesContract(t *testing.T) {
	db := pgtest.New(t)
	contract.DestinationStates(t, postgres.NewDestinationStates(db.App))
}
