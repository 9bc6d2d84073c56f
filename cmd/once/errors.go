package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/adapters/httpapi"
)

// errorsCmd prints the error codes the API answers, from the same table the
// server maps them with; the error table of docs/api.md is this output.
func errorsCmd() *cobra.Command {
	var markdown bool
	cmd := leafCommand("errors", "Print every error code with its status and meaning", func(cmd *cobra.Command) error {
		if !markdown {
			return fmt.Errorf("only --markdown output exists")
		}
		_, err := fmt.Fprint(cmd.OutOrStdout(), httpapi.ErrorTableMarkdown())
		return err
	})
	cmd.Flags().BoolVar(&markdown, "markdown", true, "a Markdown table (the one in docs/api.md)")
	return cmd
}
