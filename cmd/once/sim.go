package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
)

// Defaults of `once sim`, overridden by ONCE_SIM_ADDR and ONCE_SIM_LEDGER,
// then by the flags.
const (
	defaultSimAddr   = "127.0.0.1:8090"
	defaultSimLedger = "var/sim/ledger.jsonl"
)

func simCmd() *cobra.Command {
	var addr, ledgerPath string
	var latency time.Duration
	cmd := leafCommand("sim", "Serve the simulated platform, AI provider and material source over HTTP, with a durable ledger", func(cmd *cobra.Command) error {
		return runSim(cmd.Context(), addr, ledgerPath, latency)
	})
	cmd.Long = "Serves the simulators the workers call when ONCE_SIM_URL points here. Every side\n" +
		"effect (verification, listing, AI charge) is appended to the ledger file and fsynced\n" +
		"before it happens; a restarted simulator reloads it, so a request token (the\n" +
		"Idempotency-Key header) answers with its first outcome and acts only once, across\n" +
		"kill -9 of the caller or of the simulator. Faults are injected with POST /admin/faults."
	cmd.Flags().StringVar(&addr, "addr", envOr("ONCE_SIM_ADDR", defaultSimAddr), "listen address (ONCE_SIM_ADDR)")
	cmd.Flags().StringVar(&ledgerPath, "ledger", envOr("ONCE_SIM_LEDGER", defaultSimLedger), "ledger file (ONCE_SIM_LEDGER)")
	cmd.Flags().DurationVar(&latency, "latency", 0, "latency added to every call")
	cmd.AddCommand(simLedgerCmd())
	return cmd
}

func runSim(ctx context.Context, addr, ledgerPath string, latency time.Duration) error {
	log := simLogger().With("component", "sim")
	ledger, err := simhttp.OpenLedger(ledgerPath)
	if err != nil {
		return err
	}
	defer ledger.Close()
	server, err := simhttp.NewServer(ledger, simhttp.ServerOptions{Latency: latency, Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	httpServer := &http.Server{Handler: server, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(ln) }()
	log.Info("simulator listening", "addr", ln.Addr().String(), "ledger", ledgerPath,
		"effects", len(ledger.Entries(simhttp.Filter{EffectsOnly: true})))

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	server.Close() // held calls end, so shutdown does not wait for them
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := httpServer.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("simulator stopped")
	return nil
}

func simLedgerCmd() *cobra.Command {
	var simURL, file string
	var f simhttp.Filter
	var kind string
	var count bool
	cmd := leafCommand("ledger", "Print the simulator's ledger (JSON lines), from a running simulator or its file", func(cmd *cobra.Command) error {
		f.Kind = simhttp.Kind(kind)
		var entries []simhttp.Entry
		var err error
		switch {
		case file != "":
			entries, err = simhttp.ReadLedger(file)
			entries = simhttp.Select(entries, f)
		case simURL != "":
			entries, err = simhttp.NewAdmin(simURL).Ledger(cmd.Context(), f)
		default:
			err = errors.New("give --url (a running simulator, or ONCE_SIM_URL) or --file (its ledger)")
		}
		if err != nil {
			return err
		}
		if count {
			fmt.Fprintln(cmd.OutOrStdout(), len(entries))
			return nil
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	})
	cmd.Flags().StringVar(&simURL, "url", os.Getenv("ONCE_SIM_URL"), "URL of a running simulator (ONCE_SIM_URL)")
	cmd.Flags().StringVar(&file, "file", "", "read this ledger file instead (the simulator need not run)")
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind ("+kindList()+")")
	cmd.Flags().StringVar(&f.Token, "token", "", "only this request token")
	cmd.Flags().StringVar(&f.Subject, "subject", "", "only reads of this shop or URL")
	cmd.Flags().BoolVar(&f.EffectsOnly, "effects", false, "only side effects (no reads)")
	cmd.Flags().BoolVar(&count, "count", false, "print how many entries match, not the entries")
	return cmd
}

func kindList() string {
	names := make([]string, len(simhttp.Kinds))
	for i, k := range simhttp.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// simLogger honours ONCE_LOG_LEVEL and ONCE_LOG_FORMAT without the rest of
// the service's configuration, which the simulator does not need.
func simLogger() *slog.Logger {
	cfg := app.DefaultConfig()
	cfg.LogLevel = envOr("ONCE_LOG_LEVEL", cfg.LogLevel)
	cfg.LogFormat = envOr("ONCE_LOG_FORMAT", cfg.LogFormat)
	return app.NewLogger(cfg.LoggingConfig, os.Stderr)
}
