package app

import (
	"errors"

	"github.com/oncehq/once/adapters/httpapi"
)

// HTTPConfig is the public API's listener and the size of what it accepts.
type HTTPConfig struct {
	HTTPAddr           string `env:"ONCE_HTTP_ADDR"`
	MaxBodyBytes       int64  `env:"ONCE_MAX_BODY_BYTES"`
	HTTPMaxHeaderBytes int    `env:"ONCE_HTTP_MAX_HEADER_BYTES"`
}

func defaultHTTPConfig() HTTPConfig {
	return HTTPConfig{HTTPAddr: "127.0.0.1:8080", MaxBodyBytes: httpapi.DefaultMaxBodyBytes, HTTPMaxHeaderBytes: 32 << 10}
}

// Validate checks the caps.
func (c HTTPConfig) Validate() error {
	return errors.Join(
		invalidIf(c.MaxBodyBytes < 1024, "ONCE_MAX_BODY_BYTES=%d is too small (minimum 1024)", c.MaxBodyBytes),
		invalidIf(outside(c.HTTPMaxHeaderBytes, 4096, 1<<20), "ONCE_HTTP_MAX_HEADER_BYTES=%d must be between 4096 and 1048576", c.HTTPMaxHeaderBytes),
	)
}

func (HTTPConfig) settings() settingGroup { return httpSettings }

var httpSettings = settingGroup{
	title: "HTTP API",
	vars: map[string]setting{
		"ONCE_HTTP_ADDR": {
			help: "listen address of the API",
			doc:  "listen address",
		},
		"ONCE_MAX_BODY_BYTES": {
			help: "largest request body accepted",
			doc:  "request body cap; larger bodies get 413 before anything is stored",
		},
		"ONCE_HTTP_MAX_HEADER_BYTES": {
			help: "largest request headers accepted (431 beyond)",
			doc:  "request header cap (4096 to 1048576); larger headers get 431 (net/http allows 4 KiB of slack above it). 32 KiB holds a bearer token and every header a client sends, with room to spare",
		},
	},
}
