package postgres_test

import (
	"testing"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/contract"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The fleet's revocations through the application role: no workspace
// set, no BYPASSRLS, the grants of sql/028 only.
func TestTokenRevocationsContract(t *testing.T) {
	db := pgtest.New(t)
	contract.TokenRevocations(t, postgres.NewTokenRevocations(db.App))
}
