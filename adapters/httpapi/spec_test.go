package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
)

func specForTest() *huma.OpenAPI {
	return NewAPI(http.NewServeMux(), Deps{}).OpenAPI()
}

// TestSpecDescribesEveryOperation: tags are declared with a description,
// every idempotent operation states the idempotency rules, and every
// parameter and property has a realistic example.
func TestSpecDescribesEveryOperation(t *testing.T) {
	o := specForTest()
	declared := map[string]bool{}
	for _, tag := range o.Tags {
		assert.NotEmpty(t, tag.Description, "tag %s", tag.Name)
		declared[tag.Name] = true
	}
	assert.NotEmpty(t, o.Servers)
	assert.NotNil(t, o.Info.License)
	assert.Equal(t, License, o.Info.License.Name, "the spec names the repository's license")
	for path, item := range o.Paths {
		for _, op := range operationsOf(item) {
			if op == nil {
				continue
			}
			for _, tag := range op.Tags {
				assert.True(t, declared[tag], "%s uses undeclared tag %s", op.OperationID, tag)
			}
			idempotent := false
			for _, p := range op.Parameters {
				idempotent = idempotent || p.Name == idempotencyKeyHeader
				hasExample := p.Example != nil || len(p.Examples) > 0 || (p.Schema != nil && len(p.Schema.Examples) > 0)
				assert.True(t, hasExample, "%s %s: parameter %s has no example", op.OperationID, path, p.Name)
			}
			if idempotent {
				assert.True(t, strings.HasSuffix(op.Description, idempotencyRules), "%s does not state the idempotency rules", op.OperationID)
			}
		}
	}
	for name, s := range o.Components.Schemas.Map() {
		for prop, ps := range s.Properties {
			if ps.Ref != "" || (ps.Items != nil && ps.Items.Ref != "") || name+"."+prop == "ErrorDetail.value" {
				continue
			}
			assert.NotEmpty(t, ps.Examples, "%s.%s has no example", name, prop)
		}
	}
}

// TestEveryListIsPaged: every operation that answers a list (a GET of a
// collection, whose body has items) takes limit and starting_after and answers has_more, so one
// client loop pages them all.
func TestEveryListIsPaged(t *testing.T) {
	o := specForTest()
	lists := 0
	for path, item := range o.Paths {
		if item.Get == nil || strings.HasSuffix(path, "}") {
			continue // a GET of one resource (a transfer's items are its parts)
		}
		body := item.Get.Responses["200"]
		if body == nil || body.Content["application/json"] == nil {
			continue
		}
		schema := body.Content["application/json"].Schema
		if schema.Ref != "" {
			schema = o.Components.Schemas.SchemaFromRef(schema.Ref)
		}
		if schema.Properties["items"] == nil {
			continue
		}
		lists++
		params := map[string]bool{}
		for _, p := range item.Get.Parameters {
			params[p.In+" "+p.Name] = true
		}
		assert.True(t, params["query limit"], "GET %s takes limit", path)
		assert.True(t, params["query starting_after"], "GET %s takes starting_after", path)
		assert.NotNil(t, schema.Properties["has_more"], "GET %s answers has_more", path)
	}
	assert.GreaterOrEqual(t, lists, 9, "the lists were found")
}
