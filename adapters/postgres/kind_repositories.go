package postgres

import (
	"reflect"

	"github.com/oncehq/once/ports"
)

// kindRepositories are the repositories of the kinds of task, which each
// kind's file registers (ports.Register), so the transaction has no
// method per kind.
var kindRepositories = ports.KindRepositories[*Tx]{}

// KindRepository implements ports.Tx.
func (t *Tx) KindRepository(port reflect.Type) any { return kindRepositories.Of(t, port) }
