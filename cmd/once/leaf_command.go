package main

import "github.com/spf13/cobra"

// leafCommand is a command that takes no arguments, only flags, and runs
// run: most of once's commands.
func leafCommand(use, short string, run func(cmd *cobra.Command) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return run(cmd) },
	}
}
