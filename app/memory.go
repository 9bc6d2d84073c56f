package app

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/jwtauth"
	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/domain/workspaces"
	"github.com/oncehq/once/ports"
)

// MemoryModule is the embedded default: every stateful port in memory.
// Nothing survives a restart.
var MemoryModule = fx.Module("memory",
	fx.Provide(
		memory.NewDB,
		fx.Annotate(memory.NewSignal, fx.As(new(ports.DispatchSignal)), fx.As(new(ports.OperationEnds))),
		// An operation's end wakes the Dispatchers too: it may free the
		// next event of its job's ordering key (dispatch.WakeOnEnds).
		func(db *memory.DB, signal ports.DispatchSignal, ends ports.OperationEnds) ports.UnitOfWork {
			return operations.AnnounceEnds(dispatch.WakeOnEnds(dispatch.NotifyOnCommit(memory.NewUnitOfWork(db), signal), signal), ends)
		},
		fx.Annotate(memory.NewOutboxRelayMarks, fx.As(new(ports.OutboxRelayMarks))),
		fx.Annotate(memory.NewDiscovery, fx.As(new(ports.IdempotencyDiscovery))),
		fx.Annotate(memory.NewAPIKeyDirectory, fx.As(new(ports.APIKeyDirectory))),
		fx.Annotate(memory.NewOutboxDiscovery, fx.As(new(ports.OutboxDiscovery)), fx.As(new(ports.OutboxBacklog))),
		fx.Annotate(memory.NewOutboxPartitions, fx.As(new(ports.OutboxPartitions))),
		// The console's sessions: the one process is the deployment.
		fx.Annotate(memory.NewOperatorSessions, fx.As(new(ports.OperatorSessions))),
		fx.Annotate(memory.NewTokenRevocations, fx.As(new(ports.TokenRevocations))),
	),
	fx.Invoke(func(log *slog.Logger) {
		log.Warn("running on the embedded in-memory store: nothing is persisted; set DATABASE_URL to use PostgreSQL", "component", "memory")
	}),
)

// DemoModule seeds a demo workspace on the embedded store and prints a token
// and a request to try.
var DemoModule = fx.Module("demo",
	fx.Invoke(func(lc fx.Lifecycle, ws *workspaces.Service, issuer *jwtauth.Issuer, api HTTPConfig, logging LoggingConfig, log *slog.Logger) {
		lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
			wsID, user := uuid.MustParse(DemoWorkspaceID), uuid.MustParse(DemoUserID)
			if _, err := ws.Create(ctx, wsID, "Demo workspace", user); err != nil && !domain.IsCode(err, domain.CodeConflict) {
				return err
			}
			token, err := issuer.Issue(wsID, user)
			if err != nil {
				return err
			}
			if logging.LogFormat == "json" {
				// Logs read by a machine: the banner is a line like the others.
				log.Info("demo workspace ready", slog.String("component", "demo"), slog.String("workspace_id", DemoWorkspaceID), slog.String("user_id", DemoUserID),
					slog.String("url", "http://"+api.HTTPAddr), slog.String("docs", "http://"+api.HTTPAddr+"/docs"), slog.String("demo_token", token))
				return nil
			}
			log.Info("demo workspace ready", slog.String("component", "demo"), slog.String("workspace_id", DemoWorkspaceID), slog.String("user_id", DemoUserID))
			printDemo(api.HTTPAddr, token)
			return nil
		}})
	}),
)
