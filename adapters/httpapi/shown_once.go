package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/oncehq/once/domain/model"
)

// An idempotent answer is saved and replayed, so what it must not keep (a
// webhook signing secret, shown at create and rotation only) is left out of
// the saved copy by construction: its field is tagged shown:"once", and
// savedBody clears every such field before encoding. Nothing scans the text
// of the answer: names a tenant chose ("Basic plan.png", a URL with sig=)
// would read like secrets to a pattern and are not.
//
// checkShownOnce judges the answer's type once, when its route is
// registered: a field whose JSON name reads like a secret must carry the
// tag, so a new secret field cannot be saved by omission, and the whole API
// refuses to build (every test, the spec generation) until it is marked.
const (
	shownTag  = "shown"
	shownOnce = "once"
)

// savedBody encodes body as it is saved: every shown:"once" field cleared.
// body is a value, so clearing its copy leaves the answer sent intact;
// checkShownOnce keeps the tagged fields out of pointers, slices and maps,
// which the copy would share.
func savedBody[B any](body B) ([]byte, error) {
	v := reflect.ValueOf(&body).Elem()
	clearShownOnce(v)
	return json.Marshal(body)
}

func clearShownOnce(v reflect.Value) {
	if v.Kind() != reflect.Struct {
		return
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Tag.Get(shownTag) == shownOnce {
			v.Field(i).SetZero()
			continue
		}
		clearShownOnce(v.Field(i))
	}
}

// checkShownOnce panics when t (an answer's body type) has a field whose
// JSON name reads like a secret without the shown:"once" tag, or a tagged
// field savedBody cannot clear without touching the answer sent (one
// reached through a pointer, slice or map). A panic, not an error: it is a
// mistake in this package, seen when the routes are registered.
func checkShownOnce(t reflect.Type) {
	if err := shownOnceProblem(t, "$", false, map[reflect.Type]bool{}); err != nil {
		panic("httpapi: " + err.Error())
	}
}

func shownOnceProblem(t reflect.Type, path string, shared bool, seen map[reflect.Type]bool) error {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return shownOnceProblem(t.Elem(), path+"[]", true, seen)
	case reflect.Struct:
	default:
		return nil
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		at := path + "." + name
		if f.Anonymous && f.Tag.Get("json") == "" {
			at = path
		}
		tagged := f.Tag.Get(shownTag) == shownOnce
		switch {
		case tagged && shared:
			return fmt.Errorf("answer field %s is shown once but sits behind a pointer, slice or map, which the saved copy shares", at)
		case tagged:
			continue
		case !f.Anonymous && model.SecretLikeName(name):
			return fmt.Errorf("answer field %s reads like a secret: tag it shown:\"once\" so no saved response keeps it", at)
		}
		if err := shownOnceProblem(f.Type, at, shared, seen); err != nil {
			return err
		}
	}
	return nil
}
