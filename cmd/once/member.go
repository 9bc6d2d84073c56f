package main

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/workspaces"
)

// memberCmd manages members as the operator: the same use cases the API's
// admins call, acting as an admin of --workspace.
func memberCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "member", Short: "Add, list and remove workspace members"}
	var workspace, user, role string
	operator := func() (domain.Principal, error) {
		ws, err := uuid.Parse(workspace)
		if err != nil {
			return domain.Principal{}, fmt.Errorf("--workspace: %w", err)
		}
		return domain.Principal{WorkspaceID: ws, Role: domain.RoleAdmin}, nil
	}
	userID := func() (uuid.UUID, error) {
		id, err := uuid.Parse(user)
		if err != nil {
			return uuid.Nil, fmt.Errorf("--user: %w", err)
		}
		return id, nil
	}
	add := &cobra.Command{
		Use: "add", Short: "Add a user to a workspace", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := operator()
			if err != nil {
				return err
			}
			id, err := userID()
			if err != nil {
				return err
			}
			return withUseCases(cmd.Context(), func(ws *workspaces.Service) error {
				m, err := ws.AddMember(cmd.Context(), p, id, domain.Role(role))
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", m.UserID, m.Role)
				}
				return err
			})
		},
	}
	add.Flags().StringVar(&role, "role", string(domain.RoleMember), "admin or member")
	list := &cobra.Command{
		Use: "list", Short: "List a workspace's members (user id, role)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := operator()
			if err != nil {
				return err
			}
			return withUseCases(cmd.Context(), func(ws *workspaces.Service) error {
				ms, err := ws.ListMembers(cmd.Context(), p)
				for _, m := range ms {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", m.UserID, m.Role)
				}
				return err
			})
		},
	}
	remove := &cobra.Command{
		Use: "remove", Short: "Remove a user from a workspace (never its last admin)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := operator()
			if err != nil {
				return err
			}
			id, err := userID()
			if err != nil {
				return err
			}
			return withUseCases(cmd.Context(), func(ws *workspaces.Service) error {
				return ws.RemoveMember(cmd.Context(), p, id)
			})
		},
	}
	for _, c := range []*cobra.Command{add, remove} {
		c.Flags().StringVar(&user, "user", "", "the user's id")
		_ = c.MarkFlagRequired("user")
	}
	cmd.PersistentFlags().StringVar(&workspace, "workspace", "", "workspace id")
	_ = cmd.MarkPersistentFlagRequired("workspace")
	cmd.AddCommand(add, list, remove)
	return cmd
}
