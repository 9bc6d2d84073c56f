package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/operations"
)

// HTTPModule serves the API.
var HTTPModule = fx.Module("http",
	LimitsModule,
	fx.Provide(newHTTPServer),
	fx.Invoke(func(*http.Server) {}),
)

// The API server stops first (see Serve): its requests in flight finish
// before the workers and the Dispatcher stop, within the one shutdown
// timeout.
func newHTTPServer(lc fx.Lifecycle, cfg HTTPConfig, deps httpapi.Deps, waiters *operations.Waiters, t Tracing, metrics *prometheus.Metrics, sd *Shutdown, log *slog.Logger) (*http.Server, error) {
	log = log.With("component", "http")
	mux := http.NewServeMux()
	if err := checkTaskRoutes(httpapi.NewAPI(mux, deps)); err != nil {
		return nil, err
	}
	srv := &http.Server{
		Addr:              cfg.HTTPAddr,
		Handler:           sd.api(httpapi.Handler(mux, log, metrics, httpapi.WithTracerProvider(t.Provider))),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,

		// Larger request headers get 431 from net/http itself (it allows
		// 4096 bytes of slack above the cap).
		MaxHeaderBytes: cfg.HTTPMaxHeaderBytes,
	}
	// Reads waiting for an operation's end answer as the server shuts
	// down, instead of holding its drain for up to operations.MaxWait.
	srv.RegisterOnShutdown(waiters.Stop)
	serveInBackground(lc, srv, cfg.HTTPAddr, "ONCE_HTTP_ADDR", log, "http server", func(ctx context.Context) error {
		return sd.shutdownServer(ctx, srv, "http server")
	})
	return srv, nil
}

// checkTaskRoutes refuses an API in which a declared kind has no route
// that starts its tasks (checkStarts).
func checkTaskRoutes(api huma.API) error {
	return checkStarts(kinds.All, httpapi.TaskStarts(api))
}

// checkStarts reports a declared kind with no route that starts it, and a
// route that starts a kind that is not declared: the first could never be
// asked for, the second's tasks would run with no retention and no list
// knowing them. starts are the routes by event type (httpapi.TaskStarts).
func checkStarts(declared []kinds.Kind, starts map[string][]string) error {
	var errs []error
	events := map[string]bool{}
	for _, k := range declared {
		events[k.EventType] = true
		if len(starts[k.EventType]) == 0 {
			errs = append(errs, missing(k.EventType, "HTTP route that starts it (httpapi registerTask)"))
		}
	}
	for event, routes := range starts {
		if !events[event] {
			errs = append(errs, fmt.Errorf("HTTP route %v starts %q, which is no declared task kind", routes, event))
		}
	}
	return errors.Join(errs...)
}

// serveInBackground listens on addr when the application starts, so that a
// taken port fails start-up, and serves in the background, so that the
// hook does not block; the server shuts down with the application, through
// stop if not nil.
func serveInBackground(lc fx.Lifecycle, srv *http.Server, addr, variable string, log *slog.Logger, what string, stop func(context.Context) error) {
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return listenError(addr, variable, err)
			}
			if srv.TLSConfig != nil {
				ln = tls.NewListener(ln, srv.TLSConfig)
			}
			log.Info(what+" listening", slog.String("addr", ln.Addr().String()), slog.Bool("tls", srv.TLSConfig != nil))
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error(what+" stopped", slog.String("error", err.Error()))
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			if stop != nil {
				return stop(ctx)
			}
			return srv.Shutdown(ctx)
		},
	})
}

// listenError names the address a server cannot listen on, the variable
// that set it, and why, in one line ("cannot listen on 127.0.0.1:8080
// (ONCE_HTTP_ADDR): address already in use").
func listenError(addr, variable string, err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		err = opErr.Err
	}
	var sysErr *os.SyscallError
	if errors.As(err, &sysErr) {
		err = sysErr.Err
	}
	return fmt.Errorf("cannot listen on %s (%s): %w", addr, variable, err)
}
