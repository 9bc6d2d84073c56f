package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/secrets"
)

func secretsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "secrets", Short: "Operate the secrets stored sealed: re-seal them under the newest key"}
	cmd.AddCommand(resealCmd())
	return cmd
}

// resealCmd seals every stored secret again under the first key of
// ONCE_CREDENTIAL_KEYS (domain/secrets), so that an older key can be
// removed from the keyring (docs/operating.md).
func resealCmd() *cobra.Command {
	var pass secrets.Pass
	reseal := leafCommand("reseal", "Seal every stored secret (store credentials, webhook secrets) again under the first key of ONCE_CREDENTIAL_KEYS", func(cmd *cobra.Command) error {
		return withUseCase(cmd.Context(), func(cfg app.Config) error {
			if cfg.Embedded() {
				return fmt.Errorf("set DATABASE_URL: the embedded store keeps its secrets under the keyring its process started with")
			}
			return nil
		}, func(r *secrets.Resealer) error {
			report, err := r.Run(cmd.Context(), pass)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, k := range secrets.Kinds() {
				fmt.Fprintf(out, "%s: resealed %d, already under %s %d\n", k, report.Resealed[k], report.SealingKey, report.Current[k])
			}
			if report.Stopped {
				fmt.Fprintf(out, "stopped after %d batches: run again to go on\n", pass.MaxBatches)
			}
			return nil
		})
	})
	reseal.Long = "Seals every stored secret again under the first (sealing) key of ONCE_CREDENTIAL_KEYS, a batch of\n" +
		"rows per transaction, and prints how many it re-sealed per kind. A secret under the sealing key\n" +
		"already is left as it is, so a second run re-seals nothing, and a run stopped in the middle goes\n" +
		"on where it was at the next. It refuses to start, naming the rows, when a stored secret is\n" +
		"sealed with a key the keyring does not hold. Run it once every process has the new key first\n" +
		"(docs/operating.md, \"Retiring a credential key\")."
	reseal.Flags().IntVar(&pass.Batch, "batch", 100, "rows re-sealed per transaction")
	reseal.Flags().IntVar(&pass.MaxBatches, "max-batches", 0, "stop after this many batches that re-sealed something (0: no bound); a later run goes on")
	return reseal
}
