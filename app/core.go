package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/adapters/jwtauth"
	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/domain/revocation"
	"github.com/oncehq/once/domain/workspaces"
	"github.com/oncehq/once/ports"
)

// CoreModule provides what does not depend on the storage choice: clock, ids,
// secrets, the use cases and what the HTTP handlers take besides them
// (httpapi.Deps gathers them itself).
var CoreModule = fx.Module("core",
	fx.Provide(
		fx.Annotate(system.NewClock, fx.As(new(ports.Clock))),
		fx.Annotate(system.NewIDs, fx.As(new(ports.IDGenerator))),
		fx.Annotate(newSealer, fx.As(new(ports.CredentialSealer)), fx.As(new(ports.SealingKeys))),
		newResealer,
		newFingerprinter,
		func(cfg SecretsConfig, clock ports.Clock) (*jwtauth.Issuer, error) { return newIssuer(cfg, clock.Now) },
		newVerifier,
		func(v *jwtauth.Verifier) ports.TokenVerifier { return v },
		newRevocations,
		newIdempotency,
		newOperationWaiters,
		newOperations,
		pagination.NewService,
		func(uow ports.UnitOfWork, clock ports.Clock, secrets SecretsConfig) *workspaces.Service {
			return workspaces.NewService(uow, clock).WithMembershipCache(secrets.AuthCacheSize, secrets.AuthCacheTTL)
		},
		newAPIKeys,
		newAuthenticator,
		dispatch.NewAdmin,
		newJobFailures,
		func(f *jobs.Failures) dispatch.JobReopener { return f },
		func(f *jobs.Failures) ports.JobFailures { return f },
		func(f *jobs.Failures) httpapi.OperationCanceller { return f },
		func(d ports.OutboxDiscovery, clock ports.Clock, log *slog.Logger) *prometheus.Metrics {
			return prometheus.New(d, clock, log)
		},
		// What httpapi.Deps takes besides the use cases.
		func(a *dispatch.Admin) httpapi.DeadLetters { return deadLetters{a} },
		fx.Annotate(func(c HTTPConfig) int64 { return c.MaxBodyBytes }, fx.ResultTags(`name:"max_body_bytes"`)),
	),
)

// idempotencyIn are the idempotency service's dependencies: Epoch only
// with PostgreSQL (the memory store is never replaced under the process),
// Limits when the API provides them (LimitsModule).
type idempotencyIn struct {
	fx.In
	UnitOfWork  ports.UnitOfWork
	Fingerprint *idempotency.Fingerprinter
	Clock       ports.Clock
	Epoch       ports.StoreEpoch `optional:"true"`
	Limits      *limits.Limits   `optional:"true"`
}

// newIdempotency is the idempotency service, its completed cache tied to
// the store's epoch and applying the workspaces' limits when given.
func newIdempotency(in idempotencyIn, cfg IdempotencyConfig) (*idempotency.Service, error) {
	opts := []idempotency.Option{
		idempotency.WithCompletedCache(cfg.IdempotencyCacheSize, cfg.IdempotencyCacheTTL), idempotency.WithStoreEpoch(in.Epoch),
	}
	if in.Limits != nil {
		opts = append(opts, idempotency.WithAdmission(in.Limits))
	}
	return idempotency.NewService(in.UnitOfWork, in.Fingerprint, in.Clock, cfg.IdempotencyRetention, opts...)
}

// operationsIn are the operations service's dependencies: Limits when the
// API provides them (LimitsModule).
type operationsIn struct {
	fx.In
	UnitOfWork ports.UnitOfWork
	Waiters    *operations.Waiters
	Limits     *limits.Limits `optional:"true"`
}

// newOperations is the operations service: its reads wait for ends, and
// are admitted by the workspaces' limits one read at a time, never for a
// whole wait.
func newOperations(in operationsIn) *operations.Service {
	s := operations.NewService(in.UnitOfWork).WithWaiters(in.Waiters)
	if in.Limits != nil {
		s = s.WithAdmission(in.Limits)
	}
	return s
}

// newJobFailures ends the jobs workers give up on and reopens them on
// re-drive, for every task kind as kindCode lists it (withKindsCode).
func newJobFailures(uow ports.UnitOfWork, clock ports.Clock, log *slog.Logger) *jobs.Failures {
	return jobs.NewFailures(uow, clock, log.With("component", "jobs"), jobKinds(kindCode)...)
}

// newOperationWaiters are the reads of this process waiting for an
// operation's end, capped as LimitsConfig says.
func newOperationWaiters(ends ports.OperationEnds, cfg LimitsConfig) *operations.Waiters {
	return operations.NewWaiters(ends, cfg.OperationWaiters, cfg.WorkspaceOperationWaiters)
}

func newSealer(cfg SecretsConfig) (*aesgcm.Sealer, error) {
	keys, err := aesgcm.ParseKeys(cfg.CredentialKeys)
	if err != nil {
		return nil, err
	}
	return aesgcm.NewSealer(keys)
}

func newFingerprinter(cfg SecretsConfig) (*idempotency.Fingerprinter, error) {
	secrets, err := idempotency.ParseSecrets(cfg.IdempotencySecrets)
	if err != nil {
		return nil, err
	}
	return idempotency.NewFingerprinter(secrets)
}

// NewIssuer signs tokens with the first secret of the HS256 keyring
// (`once token`, the demo); without a keyring there is nothing to sign with.
func NewIssuer(cfg SecretsConfig) (*jwtauth.Issuer, error) { return newIssuer(cfg, nil) }

// newIssuer is NewIssuer dating its tokens by now (nil: the wall clock),
// the service's clock in the application.
func newIssuer(cfg SecretsConfig, now func() time.Time) (*jwtauth.Issuer, error) {
	ring, err := cfg.Keyring()
	if err != nil {
		return nil, err
	}
	if ring == nil {
		return nil, errors.New("no token secret to sign with: set ONCE_JWT_SECRET or ONCE_JWT_SECRETS (tokens from ONCE_JWKS_URLS are signed by the identity provider)")
	}
	return jwtauth.NewIssuer(ring, jwtauth.IssuerOptions{
		Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience,
		WorkspaceClaim: cfg.JWTWorkspaceClaim, UserClaim: cfg.JWTUserClaim, TTL: cfg.TokenTTL, Now: now,
	})
}

// newVerifier accepts the tokens of the HS256 keyring and of the identity
// providers' JWKS, as configured; the JWKS are fetched again in the
// background while the application runs.
func newVerifier(lc fx.Lifecycle, cfg SecretsConfig, log *slog.Logger) (*jwtauth.Verifier, error) {
	ring, err := cfg.Keyring()
	if err != nil {
		return nil, err
	}
	opts := jwtauth.VerifierOptions{
		Keyring: ring, Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience,
		WorkspaceClaim: cfg.JWTWorkspaceClaim, UserClaim: cfg.JWTUserClaim, Leeway: cfg.JWTLeeway,
	}
	if urls := cfg.JWKSURLList(); len(urls) > 0 {
		jwks, err := jwtauth.NewJWKS(jwtauth.JWKSOptions{
			URLs: urls, Refresh: cfg.JWKSRefresh, MinRefresh: cfg.JWKSMinRefresh, Log: log,
		})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		lc.Append(fx.Hook{
			OnStart: func(context.Context) error {
				go func() { defer close(done); jwks.Run(ctx) }()
				return nil
			},
			OnStop: func(stopCtx context.Context) error {
				cancel()
				select {
				case <-done:
					return nil
				case <-stopCtx.Done():
					return stopCtx.Err()
				}
			},
		})
		opts.JWKS = jwks
	}
	return jwtauth.NewVerifier(opts)
}

// newAuthenticator looks an API key up (a token with its prefix), or
// checks a user's token, that it is not revoked (in memory, after the
// verified-token cache, on every request), then the membership it claims.
func newAuthenticator(v *jwtauth.Verifier, revoked *revocation.Service, ws *workspaces.Service, keys *apikeys.Service) httpapi.Authenticator {
	return func(ctx context.Context, token string) (model.Principal, error) {
		if apikeys.IsKey(token) {
			return keys.Authenticate(ctx, token)
		}
		claims, err := v.Verify(ctx, token)
		if err != nil {
			return model.Principal{}, err
		}
		if err := revoked.Check(ctx, claims.AccessToken()); err != nil {
			return model.Principal{}, err
		}
		return ws.Authorize(ctx, claims.WorkspaceID, claims.UserID)
	}
}

// newRevocations is the set of revoked tokens every request is checked
// against, read again in the background every half refresh interval, so
// that a request seldom finds it due (and then reads it itself).
func newRevocations(lc fx.Lifecycle, store ports.TokenRevocations, verify ports.TokenVerifier, clock ports.Clock, cfg SecretsConfig, log *slog.Logger) *revocation.Service {
	s := revocation.NewService(store, verify, clock, cfg.TokenRevocationRefresh)
	log = log.With("component", "revocation")
	runInBackground(lc, func(ctx context.Context) {
		tick := time.NewTicker(s.Refresh() / 2)
		defer tick.Stop()
		for {
			if err := s.Read(ctx); err != nil && ctx.Err() == nil {
				log.Warn("token revocations: read failed, retried", slog.String("error", domain.SanitizeError(err)))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return s
}
