package storm

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/oncehq/once/app"
)

// environment is what a `once` process of the bench gets: the caller's
// environment, so that settings (a pool size, dispatch attempts and
// backoff, …) apply to the bench as they would to a deployment, with the
// bench's own database, secrets, broker and listen address laid over it.
type environment map[string]string

// callerEnvironment is the bench's own environment.
func callerEnvironment() environment {
	e := environment{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e[k] = v
		}
	}
	return e
}

// with returns a copy with the key, value pairs set.
func (e environment) with(kv ...string) environment {
	out := maps.Clone(e)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// list is the environment as exec.Cmd wants it.
func (e environment) list() []string {
	out := make([]string, 0, len(e))
	for _, k := range slices.Sorted(maps.Keys(e)) {
		out = append(out, k+"="+e[k])
	}
	return out
}

// config is the app.Config a process started with e reads.
func (e environment) config() (app.Config, error) {
	// The defaults first, as app.ReadConfig does: an unset variable keeps
	// its default.
	c := app.DefaultConfig()
	if err := env.ParseWithOptions(&c, env.Options{Environment: e}); err != nil {
		return app.Config{}, fmt.Errorf("configuration of the bench's processes: %w", err)
	}
	return c, nil
}

// setting is the value of the app.Config field read from the environment
// variable name, as a process reads it (its default when unset), and false
// when app.Config has no such setting.
func setting(c app.Config, name string) (string, bool) {
	return settingIn(reflect.ValueOf(c), "", name)
}

// settingIn looks through v's fields, and the fields of nested structs
// under their envPrefix, for the one read from name.
func settingIn(v reflect.Value, prefix, name string) (string, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() != "time" {
			if s, ok := settingIn(v.Field(i), prefix+f.Tag.Get("envPrefix"), name); ok {
				return s, true
			}
			continue
		}
		if tag, _, _ := strings.Cut(f.Tag.Get("env"), ","); tag != "" && prefix+tag == name {
			return fmt.Sprint(v.Field(i).Interface()), true
		}
	}
	return "", false
}

// poolLimit is the configured bound of one process's database pool, or 0
// when app.Config has no such setting or it is 0 (unbounded).
func poolLimit(c app.Config, name string) int {
	s, ok := setting(c, name)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
