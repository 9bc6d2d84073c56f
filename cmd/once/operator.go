package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/ports"
)

// operatorCmd manages the operators of the ops listener: their entries of
// ONCE_OPERATORS and their console sessions.
func operatorCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "operator", Short: "Make operators' tokens and entries of ONCE_OPERATORS; revoke their console sessions"}
	cmd.AddCommand(operatorNewCmd(), operatorHashCmd(), operatorRevokeCmd())
	return cmd
}

// nameCommand is a command whose one argument is an operator's name.
func nameCommand(use, short string, run func(cmd *cobra.Command, name string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opshttp.ValidName(args[0]) {
				return &usageError{err: fmt.Errorf("%q: an operator's name is 1 to 64 letters, digits, '.', '_', '@' or '-'", args[0]), usage: cmd.UsageString()}
			}
			return run(cmd, args[0])
		},
	}
}

func operatorNewCmd() *cobra.Command {
	return nameCommand("new", "Make a token for operator NAME: prints the token (give it to them; shown once) and, on a second line, their entry of ONCE_OPERATORS",
		func(cmd *cobra.Command, name string) error {
			secret := make([]byte, 32)
			_, _ = rand.Read(secret) // never fails (crypto/rand)
			token := "once_op_" + base64.RawURLEncoding.EncodeToString(secret)
			fmt.Fprintln(cmd.OutOrStdout(), token)
			fmt.Fprintln(cmd.OutOrStdout(), opshttp.Entry(name, token))
			return nil
		})
}

func operatorHashCmd() *cobra.Command {
	return nameCommand("hash", "Print the entry of ONCE_OPERATORS (NAME:sha256) of the token read on standard input",
		func(cmd *cobra.Command, name string) error {
			line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if err != nil && line == "" {
				return errors.New("no token on standard input")
			}
			token := strings.TrimRight(line, "\r\n")
			if len(token) < opshttp.MinTokenLen {
				return fmt.Errorf("an operator's token must be at least %d bytes (`once operator new` makes one)", opshttp.MinTokenLen)
			}
			fmt.Fprintln(cmd.OutOrStdout(), opshttp.Entry(name, token))
			return nil
		})
}

func operatorRevokeCmd() *cobra.Command {
	return nameCommand("revoke", "End every console session of operator NAME, in every process (their token still works until removed from ONCE_OPERATORS)",
		func(cmd *cobra.Command, name string) error {
			embedded := func(cfg app.Config) error {
				if cfg.Embedded() {
					return errors.New("set DATABASE_URL: the sessions of a running `once serve` on the embedded store are in its memory; revoke them through its console (POST /console/api/operators/NAME/revoke-sessions)")
				}
				return nil
			}
			return withUseCase(cmd.Context(), embedded, func(sessions ports.OperatorSessions) error {
				n, err := sessions.RevokeOperator(cmd.Context(), name, time.Now())
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "revoked %d session(s) of %s\n", n, name)
				}
				return err
			})
		})
}
