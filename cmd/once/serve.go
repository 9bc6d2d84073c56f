package main

import (
	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
)

func serveCmd() *cobra.Command {
	return processCmd("serve", "Run the API server (embedded in-memory store unless DATABASE_URL is set)", "", app.LoadConfig,
		func(cfg app.Config) error {
			if err := cfg.JobLoss(); err != nil {
				return startupError(err)
			}
			cfg = cfg.WithOpsAddr(app.OpsAddrServe)
			return runApp(cfg, app.Serve(cfg, app.DefaultLogger(cfg.LoggingConfig)))
		})
}
