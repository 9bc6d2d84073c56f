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
	"github.com/oncehq/once/domain/model"
)

// Defaults of `once sim`, overridden by ONCE_SIM_ADDR and ONCE_SIM_LEDGER,
// then by the flags.
const (
	defaultSimAddr   = "127.0.0.1:8090"
	defaultSimLedger = "var/sim/ledger.jsonl"
)

// simPlatformFlags are the platforms' settings as `once sim` takes them.
type simPlatformFlags struct {
	latency                      time.Duration
	platformLatency              map[string]string
	shopBuckets, platformBuckets map[string]string
	outages                      []string
}

// options reads the flags into the server's options.
func (f simPlatformFlags) options() (simhttp.ServerOptions, error) {
	opts := simhttp.ServerOptions{Latency: f.latency}
	var errs []error
	var err error
	opts.PlatformLatency, err = simhttp.ParsePlatformLatency(f.platformLatency)
	errs = append(errs, err)
	opts.ShopBuckets, err = simhttp.ParseBuckets(f.shopBuckets)
	errs = append(errs, err)
	opts.PlatformBuckets, err = simhttp.ParseBuckets(f.platformBuckets)
	errs = append(errs, err)
	for _, o := range f.outages {
		outage, err := simhttp.ParseOutage(o)
		opts.Outages = append(opts.Outages, outage)
		errs = append(errs, err)
	}
	return opts, errors.Join(errs...)
}

func simCmd() *cobra.Command {
	var addr, ledgerPath string
	var platforms simPlatformFlags
	cmd := leafCommand("sim", "Serve the simulated platform, AI provider and material source over HTTP, with a durable ledger", func(cmd *cobra.Command) error {
		opts, err := platforms.options()
		if err != nil {
			return err
		}
		return runSim(cmd.Context(), addr, ledgerPath, opts)
	})
	cmd.Long = "Serves the simulators the workers call when ONCE_SIM_URL points here. Every side\n" +
		"effect (verification, listing, AI charge) is appended to the ledger file and fsynced\n" +
		"before it happens; a restarted simulator reloads it, so a request token (the\n" +
		"Idempotency-Key header) answers with its first outcome and acts only once, across\n" +
		"kill -9 of the caller or of the simulator. Faults are injected with POST /admin/faults.\n\n" +
		"Each platform (" + strings.Join(model.Platforms, ", ") + ") can have its own\n" +
		"latency, outages and leaky buckets, set by the flags below or under\n" +
		"/admin/platforms/{platform}. A call a bucket cannot take answers 429 with\n" +
		"Retry-After and does nothing; a bucketed shop's answers carry\n" +
		simhttp.HeaderCallLimit + ": used/capacity. GET /admin/throttles (429s per\n" +
		"platform and shop), /admin/concurrency (calls in flight per shop and per\n" +
		simhttp.HeaderOrderingKey + ") and /admin/effects (effects per shop, timed)\n" +
		"read out what happened; DELETE /admin/counters forgets the first two."
	cmd.Flags().StringVar(&addr, "addr", envOr("ONCE_SIM_ADDR", defaultSimAddr), "listen address (ONCE_SIM_ADDR)")
	cmd.Flags().StringVar(&ledgerPath, "ledger", envOr("ONCE_SIM_LEDGER", defaultSimLedger), "ledger file (ONCE_SIM_LEDGER)")
	cmd.Flags().DurationVar(&platforms.latency, "latency", 0, "latency added to every call (unless its platform has its own)")
	cmd.Flags().StringToStringVar(&platforms.platformLatency, "platform-latency", nil, "latency of a platform's calls, e.g. shopify=200ms,amazon=50ms")
	cmd.Flags().StringToStringVar(&platforms.shopBuckets, "shop-bucket", nil, "leaky bucket per shop of a platform, capacity:leak_per_second, e.g. shopify=40:2")
	cmd.Flags().StringToStringVar(&platforms.platformBuckets, "platform-bucket", nil, "leaky bucket of all a platform's shops together, e.g. amazon=10:5")
	cmd.Flags().StringArrayVar(&platforms.outages, "outage", nil, "platform@from[+for]: the platform answers 503 from that long after the start, for that long (for ever without +for), e.g. shopify@30s+10m; repeatable")
	cmd.AddCommand(simLedgerCmd())
	return cmd
}

func runSim(ctx context.Context, addr, ledgerPath string, opts simhttp.ServerOptions) error {
	log := simLogger().With("component", "sim")
	ledger, err := simhttp.OpenLedger(ledgerPath)
	if err != nil {
		return err
	}
	defer ledger.Close()
	opts.Logger = log
	server, err := simhttp.NewServer(ledger, opts)
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
