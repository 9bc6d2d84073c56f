package app

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/oncehq/once/adapters/opshttp"
)

// OpsConfig is the ops listener (metrics, health, console, the operator's
// actions), never the public API, and who its operators are.
type OpsConfig struct {
	// OpsAddr empty takes the command's default (WithOpsAddr), one port
	// per command so that serve, dispatch and work share a host.
	OpsAddr string `env:"ONCE_OPS_ADDR"`
	// OpsPprof serves net/http/pprof under /debug/pprof/ (for `once-bench
	// http --profile-dir`).
	OpsPprof bool `env:"ONCE_OPS_PPROF"`
	// OpsTLSCertFile and OpsTLSKeyFile, both or neither, serve the ops
	// listener over TLS.
	OpsTLSCertFile string `env:"ONCE_OPS_TLS_CERT_FILE"`
	OpsTLSKeyFile  string `env:"ONCE_OPS_TLS_KEY_FILE"`
	// Operators ("name:sha256hex,...") and OperatorsFile (the same, one a
	// line) are the operators, each with a token of their own.
	Operators     string `env:"ONCE_OPERATORS"`
	OperatorsFile string `env:"ONCE_OPERATORS_FILE"`
}

// Validate checks the address, the TLS files and the operators (with
// legacyToken, ONCE_OPERATOR_TOKEN, one more of them).
func (c OpsConfig) Validate(legacyToken string) error {
	var addrErr error
	if c.OpsAddr != "" {
		_, _, err := net.SplitHostPort(c.OpsAddr)
		addrErr = invalidIf(err != nil, "ONCE_OPS_ADDR=%q must be host:port (such as 127.0.0.1:9180)", c.OpsAddr)
	}
	_, tlsErr := c.TLSConfig()
	_, opsErr := c.OperatorsOf(legacyToken)
	return errors.Join(addrErr, tlsErr, opsErr)
}

// TLSConfig is the ops listener's TLS, nil when it serves plain HTTP.
func (c OpsConfig) TLSConfig() (*tls.Config, error) {
	if (c.OpsTLSCertFile == "") != (c.OpsTLSKeyFile == "") {
		return nil, errors.New("set both ONCE_OPS_TLS_CERT_FILE and ONCE_OPS_TLS_KEY_FILE (TLS on the ops listener), or neither")
	}
	if c.OpsTLSCertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.OpsTLSCertFile, c.OpsTLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("ONCE_OPS_TLS_CERT_FILE, ONCE_OPS_TLS_KEY_FILE: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// OperatorsOf is who may use the operator routes: the operators of
// ONCE_OPERATORS and ONCE_OPERATORS_FILE, and legacyToken
// (ONCE_OPERATOR_TOKEN), when set, as opshttp.LegacyOperator.
func (c OpsConfig) OperatorsOf(legacyToken string) (*opshttp.Operators, error) {
	ops := opshttp.NewOperators()
	if err := ops.AddEntries(c.Operators); err != nil {
		return nil, fmt.Errorf("ONCE_OPERATORS: %w", err)
	}
	if c.OperatorsFile != "" {
		raw, err := os.ReadFile(c.OperatorsFile)
		if err != nil {
			return nil, fmt.Errorf("ONCE_OPERATORS_FILE: %w", err)
		}
		if err := ops.AddEntries(string(raw)); err != nil {
			return nil, fmt.Errorf("ONCE_OPERATORS_FILE %s: %w", c.OperatorsFile, err)
		}
	}
	if legacyToken != "" {
		if err := ops.AddLegacyToken(legacyToken); err != nil {
			return nil, fmt.Errorf("ONCE_OPERATOR_TOKEN: %w", err)
		}
	}
	return ops, nil
}

func (OpsConfig) settings() settingGroup { return opsSettings }

var opsSettings = settingGroup{
	title: "Ops listener",
	vars: map[string]setting{
		"ONCE_OPS_ADDR": {
			help:       "listen address of /metrics, /healthz, /readyz, the console and the operator's actions (never the API); empty: the command's own port on 127.0.0.1",
			doc:        "the ops listener: `/metrics`, `/healthz`, `/readyz` open, the console and the operator's actions behind the operators' tokens (`ONCE_OPERATORS`; see [operating.md](operating.md#listeners)); never on the public API. `:9180` (no host) listens on every interface: then set `ONCE_OPS_TLS_CERT_FILE`",
			docDefault: "`127.0.0.1:9180` (serve), `127.0.0.1:9181` (dispatch), `127.0.0.1:9182` (work)",
		},
		"ONCE_OPS_PPROF": {
			help: "serve net/http/pprof under /debug/pprof/ on the ops listener, to the operators",
			doc:  "`true` serves Go's profiler (`net/http/pprof`) under `/debug/pprof/` on the ops listener, to the operators (an operator's token as a bearer); `once-bench http --profile-dir` turns it on for the `serve` it starts",
		},
		"ONCE_OPS_TLS_CERT_FILE": {
			help: "PEM certificate (chain) of the ops listener: with ONCE_OPS_TLS_KEY_FILE it serves HTTPS only",
			doc:  "PEM certificate, or chain, of the ops listener; with `ONCE_OPS_TLS_KEY_FILE` (both or neither) the listener serves HTTPS only (TLS 1.2 or later) and the console's session cookie is `Secure`. Read at start: restart to load a renewed one ([operating.md](operating.md#tls-on-the-ops-listener))",
		},
		"ONCE_OPS_TLS_KEY_FILE": {
			help: "PEM private key of ONCE_OPS_TLS_CERT_FILE",
			doc:  "PEM private key of `ONCE_OPS_TLS_CERT_FILE`",
		},
		"ONCE_OPERATORS": {
			help:       "the operators, name:sha256hex[,name:sha256hex...], each with a token of their own (`once operator new NAME`); empty with no ONCE_OPERATORS_FILE nor ONCE_OPERATOR_TOKEN: console and operator actions off",
			doc:        "the operators of the ops listener, `name:hash[,name:hash…]`: each has a token of their own (≥ 32 bytes), of which only its SHA-256 in hex is kept here (`once operator new NAME` makes a token and its entry, `once operator hash NAME` the entry of a token read on standard input). The token names its operator in the audit log and on console sessions; an operator removed here is refused, their sessions too, by each process once restarted ([operating.md](operating.md#operators))",
			docDefault: "*(empty: console and operator actions off, unless `ONCE_OPERATORS_FILE` or `ONCE_OPERATOR_TOKEN`)*",
		},
		"ONCE_OPERATORS_FILE": {
			help: "a file of operators, one name:sha256hex a line (# comments), besides ONCE_OPERATORS",
			doc:  "a file of operators, one `name:hash` a line (blank lines and `#` comments skipped), added to `ONCE_OPERATORS`: a mounted secret. Read at start",
		},
	},
}
