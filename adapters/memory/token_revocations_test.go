package memory_test

import (
	"testing"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/testsupport/contract"
)

func TestTokenRevocationsContract(t *testing.T) {
	contract.TokenRevocations(t, memory.NewTokenRevocations())
}
