package memory_test

import (
	"testing"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/testsupport/contract"
)

func TestOperatorSessionsContract(t *testing.T) {
	contract.OperatorSessions(t, memory.NewOperatorSessions())
}
