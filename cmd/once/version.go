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
	return leafCommand("version", "Print the version, commit and build date of this binary", func(cmd *cobra.Command) error {
		return printVersion(cmd.OutOrStdout())
	})
}

func printVersion(out io.Writer) error {
	_, err := fmt.Fprintln(out, buildinfo.Read())
	return err
}
