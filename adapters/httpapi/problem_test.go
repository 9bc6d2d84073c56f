package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
)

// domainCodes reads every constant of type domain.Code from the domain
// package's source, so a code added there without a status here fails.
func domainCodes(t *testing.T) []domain.Code {
	t.Helper()
	files, err := filepath.Glob("../../domain/*.go")
	require.NoError(t, err)
	var codes []domain.Code
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if typ, ok := spec.Type.(*ast.Ident); !ok || typ.Name != "Code" {
				return true
			}
			for _, v := range spec.Values {
				lit, ok := v.(*ast.BasicLit)
				require.True(t, ok, "code constants are string literals")
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				codes = append(codes, domain.Code(s))
			}
			return true
		})
	}
	require.Greater(t, len(codes), 15, "the domain's codes were found")
	return codes
}

// Retrying the same request with the same key can help only where nothing
// was decided about the request itself: a twin still running, a body that
// did not arrive in time, a workspace over its limits. Every other 4xx
// needs another request.
var retryable4xx = map[domain.Code]bool{
	domain.CodeIdempotencyInProgress: true,
	domain.CodeRequestTimeout:        true,
	domain.CodeRateLimited:           true,
	domain.CodeTooManyWaiters:        true,
}

func TestEveryDomainCodeMapsToOneStatusAndA4xxSaysWhetherToRetry(t *testing.T) {
	for _, code := range domainCodes(t) {
		t.Run(string(code), func(t *testing.T) {
			status, ok := statusByCode[code]
			require.True(t, ok, "%s has no status in statusByCode", code)
			p := problemFromDomain(&domain.Error{Code: code, Message: "m"})
			assert.Equal(t, status, p.Status)
			assert.Equal(t, string(code), p.Code)
			if status < 500 {
				assert.Equal(t, retryable4xx[code], p.RetrySameKey, "retry_same_key of %s (%d)", code, status)
			}
			if code == domain.CodeUnavailable {
				assert.True(t, p.RetrySameKey)
			}
		})
	}
}

func TestEvery4xxHumaRaisesCarriesACodeAndSaysWhetherToRetry(t *testing.T) {
	for status := 400; status < 500; status++ {
		if http.StatusText(status) == "" {
			continue
		}
		p, ok := newProblem(status, "m").(*Problem)
		require.True(t, ok)
		assert.Equal(t, status, p.Status)
		assert.NotEmpty(t, p.Code, "%d", status)
		assert.NotEqual(t, string(domain.CodeInternal), p.Code, "%d is not an internal error", status)
		assert.Equal(t, retryable4xx[domain.Code(p.Code)], p.RetrySameKey, "retry_same_key of %d (%s)", status, p.Code)
	}
	unsupported := newProblem(http.StatusUnsupportedMediaType, "validation failed").(*Problem)
	assert.Equal(t, "UNSUPPORTED_MEDIA_TYPE", unsupported.Code)
	assert.False(t, unsupported.RetrySameKey)
	assert.Equal(t, "REQUEST_TIMEOUT", newProblem(http.StatusRequestTimeout, "").(*Problem).Code)
	assert.Equal(t, "INTERNAL", newProblem(http.StatusInternalServerError, "").(*Problem).Code)
}

func TestAValidationErrorAboutOneFieldNamesIt(t *testing.T) {
	p := problemFromDomain(&domain.Error{Code: domain.CodeValidation, Field: "source_urls[1]", Message: "source_urls[1] points to a loopback address"})
	require.Len(t, p.Errors, 1)
	assert.Equal(t, "body.source_urls[1]", p.Errors[0].Location)
	assert.Contains(t, p.Errors[0].Message, "loopback")
	assert.Empty(t, problemFromDomain(&domain.Error{Code: domain.CodeValidation, Message: "m"}).Errors)
}
