package app

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// LoggingConfig is the level and format of the logs.
type LoggingConfig struct {
	LogLevel  string `env:"ONCE_LOG_LEVEL"`
	LogFormat string `env:"ONCE_LOG_FORMAT"`
}

func defaultLoggingConfig() LoggingConfig {
	return LoggingConfig{LogLevel: "info", LogFormat: "text"}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(strings.ToUpper(s)))
	return l, err
}

// Validate checks the level and the format.
func (c LoggingConfig) Validate() error {
	var errs []error
	if _, err := parseLevel(c.LogLevel); err != nil {
		errs = append(errs, fmt.Errorf("ONCE_LOG_LEVEL: %w", err))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, errors.New("ONCE_LOG_FORMAT must be text or json"))
	}
	return errors.Join(errs...)
}

func (LoggingConfig) settings() settingGroup { return loggingSettings }

var loggingSettings = settingGroup{
	title: "Logging",
	vars: map[string]setting{
		"ONCE_LOG_LEVEL": {
			help: "debug, info, warn or error",
			doc:  "`debug`, `info`, `warn`, `error`",
		},
		"ONCE_LOG_FORMAT": {
			help: "text or json",
			doc:  "`text` or `json`",
		},
	},
}
