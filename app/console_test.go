package app_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/testkit"
)

// opsRoutes collects the routes provided for the ops listener.
func opsRoutes(routes *[]app.OpsRoute) fx.Option {
	return fx.Invoke(func(in struct {
		fx.In
		Routes []app.OpsRoute `group:"ops_routes"`
	}) {
		*routes = in.Routes
	})
}

// The console's route wires on either storage, in every process (Base).
func TestConsoleRouteWiresOnEveryStorage(t *testing.T) {
	for name, cfg := range map[string]app.Config{
		"memory":   apitest.Config(""),
		"postgres": apitest.Config("postgres://once_service@127.0.0.1:5432/once?sslmode=disable"),
	} {
		t.Run(name, func(t *testing.T) {
			cfg.OperatorToken = consoleToken
			var routes []app.OpsRoute
			require.NoError(t, fx.ValidateApp(app.Base(cfg, quiet), opsRoutes(&routes)))
		})
	}
}

// With no operator token the console's route says it is off, and start-up
// says so in one line.
func TestConsoleIsOffWithoutAnOperatorToken(t *testing.T) {
	cfg := apitest.Config("")
	logs := &testkit.LogBuffer{}
	var ops *app.OpsMux
	fxtest.New(t, app.Base(cfg, slog.New(slog.NewTextHandler(logs, nil))), fx.Populate(&ops)).RequireStart().RequireStop()
	server := httptest.NewServer(ops)
	t.Cleanup(server.Close)
	res, err := http.Get(server.URL + "/console/")
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(res.Body)
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Contains(t, string(body), "ONCE_OPERATOR_TOKEN")
	assert.Equal(t, 1, strings.Count(logs.String(), "operator console off"), logs.String())
}

func TestConfigChecksTheOperatorToken(t *testing.T) {
	cfg := apitest.Config("")
	require.NoError(t, cfg.Validate(), "no token: the console is off")
	for name, token := range map[string]string{"short": "too-short", "the JWT secret": cfg.JWTSecret} {
		cfg.OperatorToken = token
		err := cfg.Validate()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "ONCE_OPERATOR_TOKEN", name)
	}
	cfg.OperatorToken = consoleToken
	require.NoError(t, cfg.Validate())
}

// ONCE_OPERATORS holds names and hashes, never tokens; the ops listener's
// TLS takes a certificate and its key, both or neither.
func TestConfigChecksTheOperatorsAndTheOpsTLS(t *testing.T) {
	cfg := apitest.Config("")
	token := "alice-operator-token-0123456789abcdef0123"
	cfg.Operators = opshttp.Entry("alice", token) + "," + opshttp.Entry("bob", token+"-bob")
	require.NoError(t, cfg.Validate())
	ops, err := cfg.OperatorsOf(cfg.OperatorToken)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"alice", "bob"}, ops.Names())

	file := filepath.Join(t.TempDir(), "operators")
	require.NoError(t, os.WriteFile(file, []byte("# on call\n"+opshttp.Entry("carol", token+"-carol")+"\n"), 0o600))
	cfg.OperatorsFile = file
	cfg.OperatorToken = consoleToken
	ops, err = cfg.OperatorsOf(cfg.OperatorToken)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"alice", "bob", "carol", opshttp.LegacyOperator}, ops.Names(), "the legacy token is one more operator")

	for name, mutate := range map[string]func(*app.Config){
		"a token for a hash":     func(c *app.Config) { c.Operators = "alice:" + token },
		"a missing file":         func(c *app.Config) { c.OperatorsFile = filepath.Join(t.TempDir(), "none") },
		"a name given twice":     func(c *app.Config) { c.Operators = opshttp.Entry("carol", token) },
		"a certificate, no key":  func(c *app.Config) { c.OpsTLSCertFile = file },
		"a key, no certificate":  func(c *app.Config) { c.OpsTLSKeyFile = file },
		"files that are not PEM": func(c *app.Config) { c.OpsTLSCertFile, c.OpsTLSKeyFile = file, file },
	} {
		c := cfg
		mutate(&c)
		err := c.Validate()
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), token, "%s: no token in the error", name)
	}
}
