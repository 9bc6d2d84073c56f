package main

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
)

// execute runs the whole command line as main does and returns what it
// printed.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := rootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

// TestServeHelpListsEveryVariable: each variable of each group of
// app.Config (read here from the structs themselves) is in `once serve
// --help` with its default (app.DefaultConfig's), the one place an
// operator looks.
func TestServeHelpListsEveryVariable(t *testing.T) {
	help, err := execute(t, "serve", "--help")
	require.NoError(t, err)
	defaults := map[string]string{}
	for _, v := range app.ConfigVars() {
		defaults[v.Name] = v.Default
	}
	defaults["ONCE_OPS_ADDR"] = app.OpsAddrServe // serve's own
	typ := reflect.TypeFor[app.Config]()
	n := 0
	for i := range typ.NumField() {
		group := typ.Field(i).Type
		for j := range group.NumField() {
			name, _, _ := strings.Cut(group.Field(j).Tag.Get("env"), ",")
			n++
			assert.Contains(t, help, "\n  "+name+"="+defaults[name]+"\n", "once serve --help lacks %s (field %s)", name, group.Field(j).Name)
		}
	}
	require.Greater(t, n, 50, "the test reads app.Config")
	for _, line := range []string{"ONCE_DISPATCH_BATCH=100", "ONCE_MAX_BODY_BYTES=262144", "ONCE_IDEMPOTENCY_RETENTION=48h", "ONCE_RATE_LIMIT=100/s:200"} {
		assert.Contains(t, help, "\n  "+line+"\n")
	}
	assert.Contains(t, help, "OTEL_TRACES_EXPORTER")
}

// TestEveryCommandSaysWhatItReads: a runnable command either lists its
// environment or is known to read none, so a new command cannot forget;
// and every entry of the two names a command.
func TestEveryCommandSaysWhatItReads(t *testing.T) {
	seen := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := c.CommandPath()
		seen[path] = true
		if !c.Runnable() || c.Name() == "help" || strings.HasPrefix(path, "once completion") {
			return
		}
		_, lists := c.Annotations[environmentAnnotation]
		assert.True(t, lists != readsNoEnvironment[path], "%s: lists an environment: %v, known to read none: %v (cmd/once/environment.go)", path, lists, readsNoEnvironment[path])
	}
	walk(rootCmd())
	for path := range environments {
		assert.True(t, seen[path], "environments names %s, which is no command", path)
	}
	for path := range readsNoEnvironment {
		assert.True(t, seen[path], "readsNoEnvironment names %s, which is no command", path)
	}
	known := map[string]bool{}
	for _, v := range app.ConfigVars() {
		known[v.Name] = true
	}
	for path, e := range environments {
		names := append(append([]string(nil), e.only...), e.overridden...)
		for name := range e.defaults {
			names = append(names, name)
		}
		for _, name := range names {
			assert.True(t, known[name], "environments[%q] names %s, which app.Config does not have", path, name)
		}
	}

	help, err := execute(t, "migrate", "--help")
	require.NoError(t, err)
	assert.Contains(t, help, "ONCE_MIGRATE_DATABASE_URL=")
	assert.NotContains(t, help, "\n  DATABASE_URL=", "migrate reads its own URL only")
	help, err = execute(t, "dispatch", "--help")
	require.NoError(t, err)
	assert.Contains(t, help, "ONCE_OPS_ADDR="+app.OpsAddrDispatch+"\n")
	assert.NotContains(t, help, "ONCE_WORKER=", "dispatch sets it itself")
}

// TestUnknownFlagShowsTheUsage: a mistake in the command line is answered
// with the command's usage, not one line.
func TestUnknownFlagShowsTheUsage(t *testing.T) {
	_, err := execute(t, "serve", "--no-such-flag")
	require.Error(t, err)
	var usage *usageError
	require.True(t, errors.As(err, &usage), "%T: %v", err, err)
	assert.Contains(t, err.Error(), "unknown flag: --no-such-flag")
	assert.Contains(t, usage.usage, "Usage:\n  once serve [flags]")
	assert.Contains(t, usage.usage, "--help")
}

func TestVersionSaysVersionCommitAndDate(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := execute(t, args...)
		require.NoError(t, err)
		assert.Regexp(t, `^once \S+ \(commit \S+, built \S+, go\S+ \S+/\S+\)\n$`, out, "once %s", strings.Join(args, " "))
	}
}

// TestConfigPrintsTheEffectiveConfigurationMasked: every variable, with
// its source; no secret, no password; an invalid configuration is printed
// and then refused.
func TestConfigPrintsTheEffectiveConfigurationMasked(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://once_service:pg-pass-0123@db:5432/once")
	t.Setenv("ONCE_JWT_SECRET", "config-test-jwt-secret-0123456789abcdef0123")
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", "t1:bWVtYmVyLXRlc3QtaWRlbXBvdGVuY3ktc2VjcmV0LTAxMjM0NQ==")
	t.Setenv("ONCE_CREDENTIAL_KEYS", "t1:bWVtYmVyLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=")
	t.Setenv("ONCE_QUEUE", "redis")
	t.Setenv("ONCE_REDIS_URL", "redis://:redis-pass-0123@cache:6379/0")
	t.Setenv("ONCE_HTTP_ADDR", "0.0.0.0:8443")
	out, err := execute(t, "config")
	require.NoError(t, err)
	for _, secret := range []string{"pg-pass-0123", "config-test-jwt-secret", "bWVtYmVy", "redis-pass-0123"} {
		assert.NotContains(t, out, secret)
	}
	assert.Regexp(t, `\nONCE_HTTP_ADDR=0\.0\.0\.0:8443 +# environment\n`, "\n"+out)
	assert.Regexp(t, `\nDATABASE_URL=postgres://once_service:\*{8}@db:5432/once +# environment\n`, out)
	assert.Regexp(t, `\nONCE_IDEMPOTENCY_SECRETS=t1:\*{8} +# environment\n`, out)
	assert.Regexp(t, `\nONCE_DISPATCH_BATCH=100 +# default\n`, out)
	assert.Equal(t, len(app.ConfigVars()), strings.Count(out, "\n"), "one line per variable:\n%s", out)

	t.Setenv("ONCE_QUEUE", "carrier-pigeon")
	out, err = execute(t, "config")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ONCE_QUEUE")
	assert.Contains(t, out, "ONCE_QUEUE=carrier-pigeon", "an invalid configuration is shown too")
}

// TestConfigWarnsOfJobLoss: with DATABASE_URL and the memory queue, the
// configuration ends with a warning line: `once serve` refuses it, or,
// with ONCE_ACCEPT_JOB_LOSS=true, runs it at the risk of losing jobs. A
// real queue, or an API-only serve, has no warning.
func TestConfigWarnsOfJobLoss(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://once_service@db:5432/once")
	t.Setenv("ONCE_JWT_SECRET", "config-test-jwt-secret-0123456789abcdef0123")
	t.Setenv("ONCE_IDEMPOTENCY_SECRETS", "t1:bWVtYmVyLXRlc3QtaWRlbXBvdGVuY3ktc2VjcmV0LTAxMjM0NQ==")
	t.Setenv("ONCE_CREDENTIAL_KEYS", "t1:bWVtYmVyLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=")
	warning := func(t *testing.T) string {
		t.Helper()
		out, err := execute(t, "config")
		require.NoError(t, err, "the other commands run with it")
		assert.Contains(t, out, "\nONCE_QUEUE=memory")
		var warnings []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "# warning: ") {
				warnings = append(warnings, line)
			}
		}
		require.LessOrEqual(t, len(warnings), 1, out)
		if len(warnings) == 0 {
			return ""
		}
		return warnings[0]
	}
	refused := warning(t)
	assert.Contains(t, refused, "`once serve` refuses to start")
	assert.Contains(t, refused, "ONCE_QUEUE to redis, amqp or bullmq")
	assert.Contains(t, refused, "ONCE_ACCEPT_JOB_LOSS=true")

	t.Setenv("ONCE_ACCEPT_JOB_LOSS", "true")
	accepted := warning(t)
	assert.Contains(t, accepted, "ONCE_ACCEPT_JOB_LOSS=true: a crash of `once serve` loses the jobs")

	t.Setenv("ONCE_ACCEPT_JOB_LOSS", "")
	t.Setenv("ONCE_DISPATCHER", "false")
	assert.Empty(t, warning(t), "an API-only serve queues nothing")
}
