package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/revocation"
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
	cmd.AddCommand(tokenRevokeCmd())
	return cmd
}

// tokenRevokeCmd revokes tokens as the operator: one token (any user's),
// or every token of a user in a workspace issued before now, as an admin
// of it would (docs/api.md, "Revoking tokens").
func tokenRevokeCmd() *cobra.Command {
	var workspace, user, token string
	cmd := leafCommand("revoke", "Revoke one token (--token, - reads it from stdin) or every token of a user in a workspace issued before now (--workspace and --user): refused by every once serve within ONCE_TOKEN_REVOCATION_REFRESH", func(cmd *cobra.Command) error {
		ctx := cmd.Context()
		if token != "" {
			if workspace != "" || user != "" {
				return errors.New("pass --token, or --workspace and --user, not both")
			}
			if token == "-" {
				read, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 64<<10))
				if err != nil {
					return err
				}
				token = string(read)
			}
			return withUseCase(ctx, nil, func(s *revocation.Service) error {
				return s.RevokeTokenAsOperator(ctx, strings.TrimSpace(token))
			})
		}
		ws, err := parseID("workspace", workspace)
		if err != nil {
			return err
		}
		u, err := parseID("user", user)
		if err != nil {
			return err
		}
		return withUseCase(ctx, nil, func(s *revocation.Service) error {
			notBefore, err := s.RevokeMemberTokens(ctx, model.Principal{WorkspaceID: ws, Role: model.RoleAdmin}, u)
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "the tokens of %s in %s issued before %s are refused\n", u, ws, notBefore.UTC().Format(time.RFC3339))
			}
			return err
		})
	})
	cmd.Flags().StringVar(&token, "token", "", "the token to revoke (- reads it from stdin, keeping it out of the shell's history)")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace id, with --user")
	cmd.Flags().StringVar(&user, "user", "", "user id, with --workspace")
	return cmd
}
