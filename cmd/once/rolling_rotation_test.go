package main

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rotating the HS256 secret as docs/operating.md says ("Rotating the token
// secret"), by rolling restarts of two `once serve` behind HAProxy, refuses
// no valid token: the load sends every token issued so far at each step
// (from ONCE_JWT_SECRET, then from each keyring), to whichever instance
// HAProxy picks, while the instances run the configurations of two
// neighbouring steps.
func TestSecretRotationDuringRollingRestartRefusesNoValidToken(t *testing.T) {
	r := newRollingRun(t, haproxyOrSkip(t))
	oldSecret := envValue(r.env, "ONCE_JWT_SECRET")
	newSecret := "rotation-new-secret-0123456789abcdef0123"
	tokens := []string{r.token}
	r.tokens.Store(&[]string{r.token})
	load := r.startLoad(4)

	for _, ring := range []string{
		"old:" + oldSecret + ",new:" + newSecret, // the new one added second
		"new:" + newSecret + ",old:" + oldSecret, // moved first
	} {
		r.env = append(withoutVar(r.env, "ONCE_JWT_SECRET", "ONCE_JWT_SECRETS"), "ONCE_JWT_SECRETS="+ring)
		for _, inst := range r.instances {
			require.NoError(t, inst.proc.cmd.Process.Signal(syscall.SIGTERM))
			<-inst.proc.done
			require.Equal(t, 0, inst.proc.cmd.ProcessState.ExitCode(), inst.proc.output.String())
			r.start(inst)
			r.waitUp(inst)
			// A token of the configuration just rolled out, sent to both
			// the instance restarted and the one not yet.
			minted := lastLine(runOnce(t, r.env, "token", "--workspace", r.workspace.String(), "--user", r.user))
			tokens = append(tokens, minted)
			sent := slices.Clone(tokens) // the load reads it as it is stored
			r.tokens.Store(&sent)
		}
	}
	sent, failures := load.stop()
	assert.Empty(t, failures, "requests refused or failed during the rotation")
	require.Positive(t, sent)
	t.Logf("%d creates with %d tokens through HAProxy during 4 restarts, %d failed", sent, len(tokens), len(failures))
}

func envValue(env []string, name string) string {
	for _, v := range env {
		if value, ok := strings.CutPrefix(v, name+"="); ok {
			return value
		}
	}
	return ""
}

func withoutVar(env []string, names ...string) []string {
	var out []string
	for _, v := range env {
		name, _, _ := strings.Cut(v, "=")
		if !slices.Contains(names, name) {
			out = append(out, v)
		}
	}
	return out
}
