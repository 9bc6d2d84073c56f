package once

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestGeneratedCallsUseOnlySupportedShapes reads client.gen.go: every
// parameter it encodes or header it decodes must be a scalar in the simple
// or form style, the shapes internal/params handles. When the spec gains an
// array, an object or another style, this fails at `make sdk` time rather
// than the request failing at run time; extend internal/params then.
func TestGeneratedCallsUseOnlySupportedShapes(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "client.gen.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	scalar := map[string]bool{"string": true, "integer": true, "number": true, "boolean": true}
	styles := map[string]map[string]bool{
		"StyleParamWithOptions":          {"simple": true, "form": true},
		"BindStyledParameterWithOptions": {"simple": true},
	}
	calls := 0
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "runtime" {
			return true
		}
		allowed, ok := styles[sel.Sel.Name]
		if !ok {
			t.Errorf("client.gen.go calls runtime.%s, which internal/params does not have", sel.Sel.Name)
			return true
		}
		calls++
		style := stringLit(call.Args[0])
		if !allowed[style] {
			t.Errorf("runtime.%s with the %q style", sel.Sel.Name, style)
		}
		opts, ok := call.Args[len(call.Args)-1].(*ast.CompositeLit)
		if !ok {
			t.Errorf("runtime.%s without literal options", sel.Sel.Name)
			return true
		}
		for _, e := range opts.Elts {
			kv := e.(*ast.KeyValueExpr)
			key := kv.Key.(*ast.Ident).Name
			switch key {
			case "Type":
				if typ := stringLit(kv.Value); !scalar[typ] {
					t.Errorf("runtime.%s of a %q parameter: only scalars are supported", sel.Sel.Name, typ)
				}
			case "Format":
				if format := stringLit(kv.Value); format == "byte" {
					t.Errorf("runtime.%s of a byte-format parameter", sel.Sel.Name)
				}
			case "AllowReserved":
				if id, ok := kv.Value.(*ast.Ident); !ok || id.Name != "false" {
					t.Errorf("runtime.%s with allowReserved", sel.Sel.Name)
				}
			}
		}
		return true
	})
	if calls == 0 {
		t.Fatal("no runtime call found in client.gen.go: the test reads the wrong thing")
	}
}

func stringLit(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, _ := strconv.Unquote(lit.Value)
	return s
}
