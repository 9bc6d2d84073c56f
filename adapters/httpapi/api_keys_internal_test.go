package httpapi

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain/model"
)

// The scopes the spec lists are model.AllScopes, in its order: a scope
// added there must reach the spec and the SDKs.
func TestTheSpecListsEveryScope(t *testing.T) {
	var want []string
	for _, s := range model.AllScopes {
		want = append(want, string(s))
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[APIKey](), reflect.TypeFor[CreateAPIKeyRequest]()} {
		f, _ := typ.FieldByName("Scopes")
		assert.Equal(t, want, strings.Split(f.Tag.Get("enum"), ","), typ.Name())
	}
}
