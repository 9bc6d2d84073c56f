package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/adapters/httpapi"
)

// errorsCmd prints the error codes the API answers, from the same table the
// server maps them with; the error table of docs/api.md is this output.
func errorsCmd() *cobra.Command {
	return markdownTableCmd("errors", "Print every error code with its status and meaning", httpapi.ErrorTableMarkdown)
}

// scopesCmd prints every authenticated route with the scope it needs, from
// the routes as the server registers them; the scopes table of docs/api.md
// is this output.
func scopesCmd() *cobra.Command {
	return markdownTableCmd("scopes", "Print every route with the scope it needs and the roles that have it", httpapi.ScopeTableMarkdown)
}

// markdownTableCmd is a command printing one of the generated tables of
// docs/api.md.
func markdownTableCmd(name, short string, table func() string) *cobra.Command {
	var markdown bool
	cmd := leafCommand(name, short, func(cmd *cobra.Command) error {
		if !markdown {
			return fmt.Errorf("only --markdown output exists")
		}
		_, err := fmt.Fprint(cmd.OutOrStdout(), table())
		return err
	})
	cmd.Flags().BoolVar(&markdown, "markdown", true, "a Markdown table (the one in docs/api.md)")
	return cmd
}
