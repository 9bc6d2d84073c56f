package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/httpapi"
)

// HTTPModule serves the API.
var HTTPModule = fx.Module("http",
	fx.Provide(newHTTPServer),
	fx.Invoke(func(*http.Server) {}),
)

func newHTTPServer(lc fx.Lifecycle, cfg Config, deps httpapi.Deps, t Tracing, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	httpapi.NewAPI(mux, deps)
	srv := &http.Server{
		Addr:              cfg.HTTPAddr,
		Handler:           httpapi.Handler(mux, log, deps.Metrics, httpapi.WithTracerProvider(t.Provider)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,

		// Larger request headers get 431 from net/http itself (it allows
		// 4096 bytes of slack above the cap).
		MaxHeaderBytes: cfg.HTTPMaxHeaderBytes,
	}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			// Listen synchronously so a taken port fails start-up; serve in
			// the background so the hook does not block.
			ln, err := net.Listen("tcp", cfg.HTTPAddr)
			if err != nil {
				return listenError(cfg.HTTPAddr, err)
			}
			log.Info("http server listening", slog.String("addr", ln.Addr().String()))
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("http server stopped", slog.String("error", err.Error()))
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			return srv.Shutdown(ctx)
		},
	})
	return srv
}

// listenError names the address a server cannot listen on and why, in one
// line ("cannot listen on 127.0.0.1:8080 (ONCE_HTTP_ADDR): address already
// in use").
func listenError(addr string, err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		err = opErr.Err
	}
	var sysErr *os.SyscallError
	if errors.As(err, &sysErr) {
		err = sysErr.Err
	}
	return fmt.Errorf("cannot listen on %s (ONCE_HTTP_ADDR): %w", addr, err)
}
