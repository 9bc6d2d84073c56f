// Package params encodes the parameters of the generated client's requests
// and decodes the headers of its responses: the part of
// github.com/oapi-codegen/runtime that client.gen.go calls, under the same
// names (oapi-codegen.yaml imports it as runtime), for scalar values only.
//
// The SDK does not depend on the runtime module itself because that module
// brings nine modules into every consumer's go.sum (see oapi-codegen.yaml).
// The output matches the runtime's for every shape the spec uses
// (params_test.go pins it); a parameter of another shape (an array, an
// object, a label or matrix style) is an error here, and
// TestGeneratedCallsUseOnlySupportedShapes fails on the generated code
// before any request is sent.
package params

import (
	"encoding"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
)

// ParamLocation says where a parameter goes, which decides its escaping.
type ParamLocation int

// The locations, numbered as in the runtime.
const (
	ParamLocationUndefined ParamLocation = iota
	ParamLocationQuery
	ParamLocationPath
	ParamLocationHeader
	ParamLocationCookie
)

// StyleParamOptions are the runtime's options of StyleParamWithOptions.
type StyleParamOptions struct {
	ParamLocation ParamLocation
	// Type and Format are the parameter's OpenAPI type and format.
	Type, Format string
	Required     bool
	// AllowReserved (query values left unescaped) is not supported.
	AllowReserved bool
}

// StyleParamWithOptions renders one parameter: the escaped value for the
// simple style (path and header), name=value for the form style (query).
func StyleParamWithOptions(style string, _ bool, name string, value any, opts StyleParamOptions) (string, error) {
	if opts.AllowReserved {
		return "", unsupported(name, "allowReserved")
	}
	s, err := scalarString(name, value)
	if err != nil {
		return "", err
	}
	switch style {
	case "simple":
		return escape(s, opts.ParamLocation), nil
	case "form":
		return escape(name, opts.ParamLocation) + "=" + escape(s, opts.ParamLocation), nil
	default:
		return "", unsupported(name, "the "+style+" style")
	}
}

// BindStyledParameterOptions are the runtime's options of
// BindStyledParameterWithOptions.
type BindStyledParameterOptions struct {
	ParamLocation    ParamLocation
	Explode          bool
	Required         bool
	Type, Format     string
	ValueIsUnescaped bool
}

// BindStyledParameterWithOptions decodes one simple-style value (a response
// header) into dest, a pointer to a scalar.
func BindStyledParameterWithOptions(style, name, value string, dest any, opts BindStyledParameterOptions) error {
	if opts.Required && value == "" {
		return fmt.Errorf("parameter '%s' is empty, can't bind its value", name)
	}
	if style != "simple" {
		return unsupported(name, "the "+style+" style")
	}
	if !opts.ValueIsUnescaped {
		var err error
		switch opts.ParamLocation {
		case ParamLocationQuery, ParamLocationUndefined:
			value, err = url.QueryUnescape(value)
		case ParamLocationPath:
			value, err = url.PathUnescape(value)
		default: // headers and cookies are not escaped
		}
		if err != nil {
			return fmt.Errorf("error unescaping parameter '%s': %w", name, err)
		}
	}
	if tu, ok := dest.(encoding.TextUnmarshaler); ok {
		if err := tu.UnmarshalText([]byte(value)); err != nil {
			return fmt.Errorf("error unmarshaling '%s' text as %T: %w", value, dest, err)
		}
		return nil
	}
	v := reflect.ValueOf(dest)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("parameter '%s': destination %T is not a pointer", name, dest)
	}
	v = v.Elem()
	var err error
	switch v.Kind() {
	case reflect.String:
		v.SetString(value)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var n int64
		if n, err = strconv.ParseInt(value, 10, v.Type().Bits()); err == nil {
			v.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var n uint64
		if n, err = strconv.ParseUint(value, 10, v.Type().Bits()); err == nil {
			v.SetUint(n)
		}
	case reflect.Float32, reflect.Float64:
		var f float64
		if f, err = strconv.ParseFloat(value, v.Type().Bits()); err == nil {
			v.SetFloat(f)
		}
	case reflect.Bool:
		var b bool
		if b, err = strconv.ParseBool(value); err == nil {
			v.SetBool(b)
		}
	default:
		return unsupported(name, "a "+v.Type().String()+" value")
	}
	if err != nil {
		return fmt.Errorf("error binding parameter '%s' (%q): %w", name, value, err)
	}
	return nil
}

// scalarString is the text of a scalar value: its MarshalText when it has
// one (uuid.UUID), its number, bool or string otherwise.
func scalarString(name string, value any) (string, error) {
	v := reflect.ValueOf(value)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", fmt.Errorf("value is a nil pointer")
		}
		v = v.Elem()
		value = v.Interface()
	}
	if tm, ok := value.(encoding.TextMarshaler); ok {
		b, err := tm.MarshalText()
		if err != nil {
			return "", fmt.Errorf("error marshaling '%v' as text: %w", value, err)
		}
		return string(b), nil
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, v.Type().Bits()), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	default:
		return "", unsupported(name, "a "+v.Type().String()+" value")
	}
}

// escape escapes as the runtime's default encoder does: query values as
// net/url does for forms, path segments as path segments, headers not at all.
func escape(s string, loc ParamLocation) string {
	switch loc {
	case ParamLocationQuery:
		return url.QueryEscape(s)
	case ParamLocationPath:
		return url.PathEscape(s)
	default:
		return s
	}
}

func unsupported(name, what string) error {
	return fmt.Errorf("parameter '%s': %s is not supported by the SDK's parameter encoding (sdk/go/internal/params); extend it with a test", name, what)
}
