// Command once is the one binary of the service: the API server and the
// operator commands around it.
package main

import (
	"fmt"
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
	root.AddCommand(serveCmd(), dispatchCmd(), workCmd(), outboxCmd(), migrateCmd(), bootstrapCmd(), tokenCmd(), openapiCmd(), errorsCmd(), workspaceCmd(), benchCmd(), simCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "once:", err)
		os.Exit(1)
	}
}
