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
