package main

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/domain/workspaces"
	"github.com/oncehq/once/ports"
)

// memberCmd manages members as the operator: the same use cases the API's
// admins call, acting as an admin of --workspace.
func memberCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "member", Short: "Add, list and remove workspace members"}
	var workspace, user, role string
	// run parses the flags and runs fn with the use cases, as an admin of
	// the workspace; user is uuid.Nil for commands without --user.
	run := func(fn func(cmd *cobra.Command, ws *workspaces.Service, p model.Principal, user uuid.UUID) error) func(*cobra.Command) error {
		return func(cmd *cobra.Command) error {
			wsID, err := parseID("workspace", workspace)
			if err != nil {
				return err
			}
			userID := uuid.Nil
			if cmd.Flags().Lookup("user") != nil {
				if userID, err = parseID("user", user); err != nil {
					return err
				}
			}
			p := model.Principal{WorkspaceID: wsID, Role: model.RoleAdmin}
			return withUseCases(cmd.Context(), func(ws *workspaces.Service) error { return fn(cmd, ws, p, userID) })
		}
	}
	add := leafCommand("add", "Add a user to a workspace", run(func(cmd *cobra.Command, ws *workspaces.Service, p model.Principal, user uuid.UUID) error {
		m, err := ws.AddMember(cmd.Context(), p, user, model.Role(role))
		if err == nil {
			fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", m.UserID, m.Role)
		}
		return err
	}))
	add.Flags().StringVar(&role, "role", string(model.RoleMember), "admin or member")
	list := leafCommand("list", "List a workspace's members (user id, role)", run(func(cmd *cobra.Command, ws *workspaces.Service, p model.Principal, _ uuid.UUID) error {
		q := ports.ListQuery{Limit: pagination.MaxLimit}
		for {
			page, err := ws.ListMembers(cmd.Context(), p, q)
			if err != nil {
				return err
			}
			for _, m := range page.Items {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", m.UserID, m.Role)
			}
			if !page.HasMore {
				return nil
			}
			q.StartingAfter = page.Items[len(page.Items)-1].UserID
		}
	}))
	remove := leafCommand("remove", "Remove a user from a workspace (never its last admin)", run(func(cmd *cobra.Command, ws *workspaces.Service, p model.Principal, user uuid.UUID) error {
		return ws.RemoveMember(cmd.Context(), p, user)
	}))
	for _, c := range []*cobra.Command{add, remove} {
		c.Flags().StringVar(&user, "user", "", "the user's id")
		_ = c.MarkFlagRequired("user")
	}
	cmd.PersistentFlags().StringVar(&workspace, "workspace", "", "workspace id")
	_ = cmd.MarkPersistentFlagRequired("workspace")
	cmd.AddCommand(add, list, remove)
	return cmd
}
