package main

import (
	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
)

func serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the API server (embedded in-memory store unless DATABASE_URL is set)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			cfg = cfg.WithOpsAddr(app.OpsAddrServe)
			return runApp(cfg, app.Serve(cfg, app.DefaultLogger(cfg)))
		},
	}
}
