package main

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/oncehq/once/domain/workspaces"
)

func workspaceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "workspace", Short: "Manage workspaces"}
	var name, admin, id string
	create := leafCommand("create", "Create a workspace with its first admin", func(cmd *cobra.Command) error {
		adminID, err := parseID("admin", admin)
		if err != nil {
			return err
		}
		wsID := uuid.Nil
		if id != "" {
			if wsID, err = parseID("id", id); err != nil {
				return err
			}
		}
		return withUseCases(cmd.Context(), func(ws *workspaces.Service) error {
			w, err := ws.Create(cmd.Context(), wsID, name, adminID)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), w.ID)
			return nil
		})
	})
	create.Flags().StringVar(&name, "name", "", "workspace name")
	create.Flags().StringVar(&admin, "admin", "", "user id of the first admin")
	create.Flags().StringVar(&id, "id", "", "workspace id (default: a new one)")
	_ = create.MarkFlagRequired("name")
	_ = create.MarkFlagRequired("admin")
	cmd.AddCommand(create, memberCmd())
	return cmd
}

// withUseCases starts the storage and use cases without the servers and
// hands over the workspaces use cases.
func withUseCases(ctx context.Context, fn func(*workspaces.Service) error) error {
	return withUseCase(ctx, nil, fn)
}
