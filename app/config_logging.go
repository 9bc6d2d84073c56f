package app

import (
	"errors"
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
	_, err := parseLevel(c.LogLevel)
	return errors.Join(
		invalidIf(err != nil, "ONCE_LOG_LEVEL: %w", err),
		invalidIf(c.LogFormat != "text" && c.LogFormat != "json", "ONCE_LOG_FORMAT must be text or json"),
	)
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
