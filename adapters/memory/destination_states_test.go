package memory_test

import (
	"testing"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/testsupport/contract"
)

func TestDestinationStatesContract(t *testing.T) {
	contract.DestinationStates(t, memory.NewDestinationStates())
}
