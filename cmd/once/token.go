package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
)

func tokenCmd() *cobra.Command {
	var workspace, user string
	cmd := leafCommand("token", "Print a bearer token for local use, signed with the first secret of ONCE_JWT_SECRETS (or ONCE_JWT_SECRET)", func(cmd *cobra.Command) error {
		cfg, err := app.LoadConfig()
		if err != nil {
			return err
		}
		if !cfg.Embedded() && (!cmd.Flags().Changed("workspace") || !cmd.Flags().Changed("user")) {
			// The demo workspace exists only on the embedded store.
			return fmt.Errorf("with DATABASE_URL set, pass --workspace and --user (a member of it): the demo workspace exists only on the embedded store")
		}
		ws, err := parseID("workspace", workspace)
		if err != nil {
			return err
		}
		u, err := parseID("user", user)
		if err != nil {
			return err
		}
		issuer, err := app.NewIssuer(cfg.SecretsConfig)
		if err != nil {
			return err
		}
		token, err := issuer.Issue(ws, u)
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), token)
		return nil
	})
	cmd.Flags().StringVar(&workspace, "workspace", app.DemoWorkspaceID, "workspace id")
	cmd.Flags().StringVar(&user, "user", app.DemoUserID, "user id")
	return cmd
}
