package app

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/caarlos0/env/v11"
)

// explainEnvError rewrites the env library's errors, which name Go fields
// ("DispatchBatch"), to name the variables an operator sets
// ("ONCE_DISPATCH_BATCH"), one line per variable.
func explainEnvError(err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	lines := make([]string, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			lines = append(lines, fmt.Sprintf("%s: cannot parse as %s: %v", envName(pe.Name), pe.Type, unwrapAll(pe.Err)))
			continue
		}
		lines = append(lines, e.Error())
	}
	return errors.New(strings.Join(lines, "; "))
}

// envName is the variable of Config's field, or the field if it has none.
func envName(field string) string {
	if f, ok := reflect.TypeFor[Config]().FieldByName(field); ok {
		if name, _, _ := strings.Cut(f.Tag.Get("env"), ","); name != "" {
			return name
		}
	}
	return field
}

// unwrapAll drops strconv's wrapping ("strconv.ParseInt: parsing "x": invalid
// syntax" becomes "invalid syntax") to keep the line short.
func unwrapAll(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
