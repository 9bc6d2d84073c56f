package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/testkit"
)

// withStack prints a stack trace with %+v, as pkg/errors' errors do in the
// broker libraries.
type withStack struct{ msg string }

func (e withStack) Error() string { return e.msg }
func (e withStack) Format(s fmt.State, verb rune) {
	if s.Flag('+') {
		fmt.Fprintf(s, "%s\ngithub.com/x/y.f\n\t/src/y.go:12", e.msg)
		return
	}
	fmt.Fprint(s, e.msg)
}

// Every line is one line: an error attribute is its sanitized text, in
// text and in JSON, and the broker libraries' loggers come out structured.
func TestLogLinesAreStructuredAndErrorsPlain(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LogFormat = format
			out := &testkit.LogBuffer{}
			log := NewLogger(cfg.LoggingConfig, out)
			log.Error("publish failed", "error", fmt.Errorf("cannot xadd: %w", withStack{"dial tcp 10.0.0.7:6379: connection refused"}))
			routeLibraryLogs(log)
			redisLogger{}.Printf(context.Background(), "connection pool: failed to dial after %d attempts: %v",
				5, errors.New("dial tcp 10.0.0.7:6379: connect: connection refused"))
			amqpLogger{}.Printf("reconnect failed\n%s", "second line")

			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.Len(t, lines, 3, out.String())
			for _, line := range lines {
				assert.NotContains(t, line, "y.go:12", "no stack trace")
				assert.NotContains(t, line, "10.0.0.7", "no internal address")
				if format == "json" {
					var entry map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &entry), line)
				}
			}
			assert.Contains(t, lines[1], map[string]string{"text": "component=redis", "json": `"component":"redis"`}[format])
			assert.Contains(t, lines[2], map[string]string{"text": "component=amqp", "json": `"component":"amqp"`}[format])
		})
	}
}
