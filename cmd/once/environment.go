package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
)

// All configuration is by environment, so every command's help ends with
// the variables it reads, their defaults and a line on each. Names and
// defaults come from app.Config's struct tags (app.ConfigVars), so they
// cannot drift from what is parsed; which of them a command reads is said
// once per command, in environments below.

// environmentAnnotation holds a command's rendered variables; the root's
// help template prints it.
const environmentAnnotation = "environment"

const environmentTemplate = `{{with index .Annotations "environment"}}
Environment (read at start):
{{.}}{{end}}`

// environment says which variables a command reads.
type environment struct {
	// only, when set, limits the list to these variables of app.Config;
	// otherwise the command loads app.Config, which reads and validates
	// every variable.
	only []string
	// defaults are the command's own defaults where they differ from the
	// struct's (ONCE_OPS_ADDR: a port per command).
	defaults map[string]string
	// overridden are variables the command reads but sets itself, named in
	// note rather than listed.
	overridden []string
	// extra are variables outside app.Config (once sim's own).
	extra []app.ConfigVar
	note  string
	// tracing: the command starts the application, whose tracer reads the
	// standard OTEL_* variables.
	tracing bool
}

// environments says what each runnable command reads, by its path; the
// commands in readsNoEnvironment read nothing. TestEveryCommandSaysWhatItReads
// fails when a command is in neither, or an entry names no command.
var environments = map[string]environment{
	"once serve":    {tracing: true, defaults: map[string]string{"ONCE_OPS_ADDR": app.OpsAddrServe}},
	"once dispatch": standaloneEnvironment(app.OpsAddrDispatch, "a Dispatcher and no workers"),
	"once work":     standaloneEnvironment(app.OpsAddrWork, "the workers and no Dispatcher"),
	"once token":    {},
	"once config":   {},

	"once workspace create":        {tracing: true},
	"once workspace member add":    {tracing: true},
	"once workspace member list":   {tracing: true},
	"once workspace member remove": {tracing: true},
	"once token revoke":            {tracing: true},
	"once outbox dead-letters":     {tracing: true},
	"once outbox redrive":          {tracing: true},
	"once outbox release":          {tracing: true},
	"once secrets reseal":          {tracing: true},
	"once operator revoke":         {tracing: true},

	"once migrate": {only: []string{"ONCE_MIGRATE_DATABASE_URL"}},
	"once bootstrap": {
		only: []string{},
		extra: []app.ConfigVar{
			{Name: ownerPasswordVar, Help: "the owner role's password (unset: left as it is)", Secret: true},
			{Name: appPasswordVar, Help: "the application role's password (unset: left as it is)", Secret: true},
		},
	},
	"once sim": {
		only: []string{"ONCE_LOG_LEVEL", "ONCE_LOG_FORMAT"},
		extra: []app.ConfigVar{
			{Name: "ONCE_SIM_ADDR", Default: defaultSimAddr, Help: "listen address (--addr overrides it)"},
			{Name: "ONCE_SIM_LEDGER", Default: defaultSimLedger, Help: "ledger file (--ledger overrides it)"},
		},
	},
	"once sim ledger": {only: []string{"ONCE_SIM_URL"}},
}

var readsNoEnvironment = map[string]bool{"once openapi": true, "once errors": true, "once scopes": true, "once version": true,
	"once operator new": true, "once operator hash": true}

// standaloneEnvironment is what dispatch and work read: the whole
// configuration but the two switches they set themselves, with their own
// ops port.
func standaloneEnvironment(opsAddr, runs string) environment {
	return environment{
		tracing:    true,
		defaults:   map[string]string{"ONCE_OPS_ADDR": opsAddr},
		overridden: []string{"ONCE_DISPATCHER", "ONCE_WORKER"},
		note:       "ONCE_DISPATCHER and ONCE_WORKER are ignored: this process runs " + runs + ".",
	}
}

// describeEnvironments adds its environment section to the help of each
// command under root.
func describeEnvironments(root *cobra.Command) {
	for _, c := range root.Commands() {
		describeEnvironments(c)
	}
	if e, ok := environments[root.CommandPath()]; ok {
		if root.Annotations == nil {
			root.Annotations = map[string]string{}
		}
		root.Annotations[environmentAnnotation] = e.render()
	}
}

// render lists the variables for the help template.
func (e environment) render() string {
	var vars []app.ConfigVar
	for _, v := range app.ConfigVars() {
		if (e.only != nil && !slices.Contains(e.only, v.Name)) || slices.Contains(e.overridden, v.Name) {
			continue
		}
		if d, ok := e.defaults[v.Name]; ok {
			v.Default = d
		}
		vars = append(vars, v)
	}
	vars = append(vars, e.extra...)
	var b strings.Builder
	if e.only == nil {
		b.WriteString("  Every variable is read and validated, also by a command that has no use for it;\n" +
			"  `once config` prints the values in effect, secrets masked.\n")
	}
	if e.note != "" {
		b.WriteString("  " + e.note + "\n")
	}
	if e.tracing {
		b.WriteString("  Traces follow the standard OTEL_* variables (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT,\n" +
			"  OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...); with none set, tracing is off.\n")
	}
	for _, v := range vars {
		secret := ""
		if v.Secret {
			secret = " (secret)"
		}
		fmt.Fprintf(&b, "  %s=%s\n        %s%s\n", v.Name, v.Default, v.Help, secret)
	}
	return b.String()
}
