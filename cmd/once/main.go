// Command once is the one binary of the service: the API server and the
// operator commands around it.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/buildinfo"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		if os.Getenv("ONCE_LOG_FORMAT") == "json" {
			// Logs read by a machine: the last line is JSON too.
			slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error("once: " + err.Error())
		} else {
			fmt.Fprintln(os.Stderr, "once:", err)
			var usage *usageError
			if errors.As(err, &usage) {
				fmt.Fprint(os.Stderr, "\n"+usage.usage)
			}
		}
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "once",
		Short:         "Idempotent writes and a transactional outbox for the listing platform",
		Version:       buildinfo.Read().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetHelpTemplate(root.HelpTemplate() + environmentTemplate)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{err: err, usage: cmd.UsageString()}
	})
	root.AddCommand(serveCmd(), dispatchCmd(), workCmd(), outboxCmd(), migrateCmd(), bootstrapCmd(), tokenCmd(),
		openapiCmd(), errorsCmd(), scopesCmd(), workspaceCmd(), operatorCmd(), secretsCmd(), simCmd(), configCmd(), versionCmd())
	describeEnvironments(root)
	return root
}

// usageError is a mistake in the command line: main prints the command's
// usage after it.
type usageError struct {
	err   error
	usage string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
