package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/buildinfo"
)

// versionCmd prints what `once --version` prints: the version, commit and
// build date (see buildinfo).
func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date of this binary",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return printVersion(cmd.OutOrStdout()) },
	}
}

func printVersion(out io.Writer) error {
	_, err := fmt.Fprintln(out, buildinfo.Read())
	return err
}
