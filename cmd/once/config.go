package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
)

// configCmd prints the configuration a command started now would run with.
func configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the configuration in effect, secrets masked",
		Long: "Prints every variable as NAME=value, with where the value comes from: the environment,\n" +
			"the default, or a dev default (the public secrets of the embedded store). Secrets are\n" +
			"masked (a list of id:key pairs keeps its ids), and so is the password of any URL or\n" +
			"connection string. An invalid configuration is printed too, then what is wrong with it;\n" +
			"a configuration `once serve` refuses or runs at a risk (a crash that loses jobs) ends with\n" +
			"a # warning line.\n" +
			"ONCE_OPS_ADDR is empty unless set: serve, dispatch and work each have their own default.",
		Args: cobra.NoArgs,
	}
	markdown := cmd.Flags().Bool("markdown", false, "print the settings tables of docs/configuration.md instead, from the same declarations as --help")
	updateDoc := cmd.Flags().String("update-doc", "", "rewrite the settings tables of this file (docs/configuration.md) between its markers")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch {
		case *updateDoc != "":
			return updateConfigDoc(*updateDoc)
		case *markdown:
			_, err := io.WriteString(cmd.OutOrStdout(), app.ConfigMarkdown())
			return err
		}
		return printConfig(cmd.OutOrStdout())
	}
	return cmd
}

// updateConfigDoc rewrites the settings tables of the document at path,
// leaving its prose as it is.
func updateConfigDoc(path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := app.RewriteConfigDoc(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, updated, 0o644)
}

// printConfig prints the configuration, then says what is wrong with it.
func printConfig(out io.Writer) error {
	cfg, err := app.ReadConfig()
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, v := range cfg.Effective(os.LookupEnv) {
		fmt.Fprintf(w, "%s=%s\t# %s\n", v.Name, v.Value, v.Source)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if warning := jobLossWarning(cfg); warning != "" {
		fmt.Fprintln(out, "# warning: "+warning)
	}
	return cfg.Validate()
}

// jobLossWarning says what `once serve` makes of a configuration that
// loses jobs in a crash (app.Config.JobLoss): it refuses it, or, the loss
// accepted, runs so. The other commands run either way.
func jobLossWarning(cfg app.Config) string {
	switch {
	case !cfg.LosesJobsOnCrash():
		return ""
	case cfg.AcceptJobLoss:
		return "ONCE_ACCEPT_JOB_LOSS=true: a crash of `once serve` loses the jobs queued in the process " +
			"(ONCE_QUEUE=memory with DATABASE_URL); ONCE_QUEUE=redis, amqp or bullmq loses none"
	default:
		return "`once serve` refuses to start: " + app.ErrJobLoss.Error()
	}
}
