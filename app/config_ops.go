package app

import "net"

// OpsConfig is the ops listener (metrics, health, console, the operator's
// actions), never the public API.
type OpsConfig struct {
	// OpsAddr empty takes the command's default (WithOpsAddr), one port
	// per command so that serve, dispatch and work share a host.
	OpsAddr string `env:"ONCE_OPS_ADDR"`
	// OpsPprof serves net/http/pprof under /debug/pprof/ (for `once-bench
	// http --profile-dir`).
	OpsPprof bool `env:"ONCE_OPS_PPROF"`
}

// Validate checks the address.
func (c OpsConfig) Validate() error {
	if c.OpsAddr == "" {
		return nil
	}
	_, _, err := net.SplitHostPort(c.OpsAddr)
	return invalidIf(err != nil, "ONCE_OPS_ADDR=%q must be host:port (such as 127.0.0.1:9180)", c.OpsAddr)
}

func (OpsConfig) settings() settingGroup { return opsSettings }

var opsSettings = settingGroup{
	title: "Ops listener",
	vars: map[string]setting{
		"ONCE_OPS_ADDR": {
			help:       "listen address of /metrics, /healthz, /readyz, the console and the operator's actions (never the API); empty: the command's own port on 127.0.0.1",
			doc:        "the ops listener: `/metrics`, `/healthz`, `/readyz` open, the console and the operator's actions behind `ONCE_OPERATOR_TOKEN` (see [operating.md](operating.md#listeners)); never on the public API. `:9180` (no host) listens on every interface",
			docDefault: "`127.0.0.1:9180` (serve), `127.0.0.1:9181` (dispatch), `127.0.0.1:9182` (work)",
		},
		"ONCE_OPS_PPROF": {
			help: "serve net/http/pprof under /debug/pprof/ on the ops listener, to the operator token",
			doc:  "`true` serves Go's profiler (`net/http/pprof`) under `/debug/pprof/` on the ops listener, to the operator token (`ONCE_OPERATOR_TOKEN` as a bearer); `once-bench http --profile-dir` turns it on for the `serve` it starts",
		},
	},
}
