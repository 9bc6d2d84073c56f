package httpapi

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/kinds"
)

// A kind's live-index conflict, as its descriptor declares it, is the
// error the API answers: its code has one row of the error table, with the
// declared status and help.
func TestKindConflictsAreAnsweredAsDeclared(t *testing.T) {
	for _, k := range kinds.All {
		if k.Conflict == nil {
			continue
		}
		code := domain.Code(k.Conflict.Code)
		assert.Equal(t, k.Conflict.Status, statusByCode[code], "status of %s (%s)", code, k.EventType)
		i := slices.IndexFunc(errorTable, func(e errorEntry) bool { return e.code == code })
		if assert.GreaterOrEqual(t, i, 0, "%s has a row", code) {
			assert.Equal(t, k.Conflict.Help, errorTable[i].help, "help of %s (%s)", code, k.EventType)
		}
	}
}
