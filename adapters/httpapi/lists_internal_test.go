package httpapi

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/ports"
)

// A list input's query parameters fill the ports.ListQuery fields of their
// names; one that has none would be dropped silently, so registration
// refuses it.
func TestListFiltersAreListQueryFields(t *testing.T) {
	assert.Equal(t, []string{"Limit", "StartingAfter", "Status", "StoreID"}, listFilters[ListSyncsInput]())
	store := uuid.New()
	in := ListSyncsInput{ListTasksInput: ListTasksInput{ListParams: ListParams{Limit: 7}, Status: "failed"}, StoreID: store}
	assert.Equal(t, ports.ListQuery{Limit: 7, Status: "failed", StoreID: store}, listQuery(&in, listFilters[ListSyncsInput]()))

	type withUnknownFilter struct {
		ListParams
		Shop string `query:"shop"`
	}
	assert.PanicsWithValue(t, "list input httpapi.withUnknownFilter: query parameter Shop has no ports.ListQuery field of its name and type",
		func() { listFilters[withUnknownFilter]() })
}
