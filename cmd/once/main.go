// Command once is the one binary of the service: the API server and the
// operator commands around it.
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "once",
		Short:         "Idempotent writes and a transactional outbox for the listing platform",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCmd(), dispatchCmd(), workCmd(), outboxCmd(), migrateCmd(), bootstrapCmd(), tokenCmd(), openapiCmd(), errorsCmd(), workspaceCmd(), simCmd())
	if err := root.Execute(); err != nil {
		if os.Getenv("ONCE_LOG_FORMAT") == "json" {
			// Logs read by a machine: the last line is JSON too.
			slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error("once: " + err.Error())
		} else {
			fmt.Fprintln(os.Stderr, "once:", err)
		}
		os.Exit(1)
	}
}
