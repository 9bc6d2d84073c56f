// Package apikeys holds the use cases of a workspace's API keys: the
// credentials of machine clients, each with a name and scopes, created,
// listed and revoked by the workspace's admins, and the authentication of
// a request that carries one.
package apikeys

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/ports"
)

// MaxNameLength bounds a key's name, in characters.
const MaxNameLength = 100

// Deps are what the service works with.
type Deps struct {
	UoW ports.UnitOfWork
	// Directory finds a key's workspace from its lookup id.
	Directory ports.APIKeyDirectory
	Hasher    *Hasher
	Clock     ports.Clock
	IDs       ports.IDGenerator
	Log       *slog.Logger
	Cache     CacheOptions
}

// Service manages API keys and authenticates requests that carry one.
// Managing keys is for the workspace's admins only (CodeForbidden
// otherwise), with keys:read or keys:write.
type Service struct {
	uow       ports.UnitOfWork
	directory ports.APIKeyDirectory
	hasher    *Hasher
	clock     ports.Clock
	ids       ports.IDGenerator
	log       *slog.Logger
	lists     *pagination.Service
	cache     *keyCache
	verifying verifying
}

// NewService builds the service.
func NewService(d Deps) *Service {
	return &Service{
		uow: d.UoW, directory: d.Directory, hasher: d.Hasher, clock: d.Clock, ids: d.IDs, log: d.Log,
		lists: pagination.NewService(d.UoW), cache: newKeyCache(d.Cache),
	}
}

// WithSecret is a key and its secret in plaintext, which only Create's
// answer carries.
type WithSecret struct {
	Key    model.APIKey
	Secret string
}

// CreateCommand asks for a new key.
type CreateCommand struct {
	Name   string
	Scopes []string
}

// repo is tx's API key repository.
func repo(tx ports.Tx) ports.APIKeyRepository { return ports.Repository[ports.APIKeyRepository](tx) }

// authorize refuses a caller who is not an admin holding scope: a key
// acts for its admin, and only as far as its own scopes go.
func authorize(p model.Principal, scope model.Scope) error {
	if p.Role != model.RoleAdmin || !p.Allows(scope) {
		return domain.Errorf(domain.CodeForbidden, "only a workspace admin may manage API keys (scope %s)", scope)
	}
	return nil
}

// Create writes, in tx, a key named cmd.Name with cmd.Scopes, acting as
// p, and returns its secret, which is never shown again.
//
// Errors: CodeForbidden for a caller who is not an admin with keys:write,
// or a scope the caller does not hold itself (Field scopes[i]: a key is
// never given more than its creator may do); CodeValidation for an empty
// or too long name, no scopes, an unknown or repeated scope (Field names
// it).
func (s *Service) Create(ctx context.Context, tx ports.Tx, p model.Principal, cmd CreateCommand) (WithSecret, error) {
	if err := authorize(p, model.ScopeKeysWrite); err != nil {
		return WithSecret{}, err
	}
	name := strings.TrimSpace(cmd.Name)
	if name == "" || utf8.RuneCountInString(name) > MaxNameLength {
		return WithSecret{}, &domain.Error{Code: domain.CodeValidation, Field: "name",
			Message: fmt.Sprintf("name must hold 1 to %d characters", MaxNameLength)}
	}
	scopes, err := checkScopes(p, cmd.Scopes)
	if err != nil {
		return WithSecret{}, err
	}
	secret, lookup, err := newSecret()
	if err != nil {
		return WithSecret{}, err
	}
	keyID, sum := s.hasher.hash(secret)
	k := model.APIKey{
		ID: s.ids.NewID(), WorkspaceID: p.WorkspaceID, LookupID: lookup, Name: name, Scopes: scopes,
		CreatedBy: p.UserID, Role: p.Role, HashKeyID: keyID, Hash: sum, CreatedAt: s.clock.Now(),
	}
	if err := repo(tx).Create(ctx, k); err != nil {
		return WithSecret{}, err
	}
	// Logged in the request's transaction, before its commit: the caller
	// (the idempotent route) only completes its record after, and a
	// create that then fails is the rare case the line overstates.
	s.audit(ctx, "api key created", p, k)
	return WithSecret{Key: k, Secret: secret}, nil
}

// checkScopes validates the scopes asked for and returns them in
// model.AllScopes' order.
func checkScopes(p model.Principal, asked []string) ([]model.Scope, error) {
	if len(asked) == 0 {
		return nil, &domain.Error{Code: domain.CodeValidation, Field: "scopes", Message: "scopes must name at least one scope"}
	}
	scopes := make([]model.Scope, 0, len(asked))
	for i, raw := range asked {
		sc := model.Scope(raw)
		field := fmt.Sprintf("scopes[%d]", i)
		switch {
		case !sc.Valid():
			return nil, &domain.Error{Code: domain.CodeValidation, Field: field,
				Message: fmt.Sprintf("%q is not a scope (docs/api.md#scopes lists them)", raw)}
		case slices.Contains(scopes, sc):
			return nil, &domain.Error{Code: domain.CodeValidation, Field: field, Message: fmt.Sprintf("scope %s is named twice", sc)}
		case !p.Allows(sc):
			return nil, &domain.Error{Code: domain.CodeForbidden, Field: field,
				Message: fmt.Sprintf("you do not hold scope %s, so no key you make may", sc)}
		}
		scopes = append(scopes, sc)
	}
	slices.SortFunc(scopes, func(a, b model.Scope) int {
		return slices.Index(model.AllScopes, a) - slices.Index(model.AllScopes, b)
	})
	return scopes, nil
}

// Get reads one key. Errors: CodeForbidden, CodeNotFound.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.APIKey, error) {
	if err := authorize(p, model.ScopeKeysRead); err != nil {
		return model.APIKey{}, err
	}
	return ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) {
		return repo(tx).Get(ctx, id)
	})
}

// List returns a page of the workspace's keys, revoked ones included,
// newest first. Errors: CodeForbidden, CodeValidation (the limit).
func (s *Service) List(ctx context.Context, p model.Principal, q ports.ListQuery) (pagination.Page[model.APIKey], error) {
	if err := authorize(p, model.ScopeKeysRead); err != nil {
		return pagination.Page[model.APIKey]{}, err
	}
	return pagination.List(ctx, s.lists, p, q, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.APIKey, error) {
		return repo(tx).List
	})
}

// Revoke revokes the key id: this process refuses it from now on, every
// other within the cache's TTL (CacheOptions). Revoking a revoked key
// changes nothing. Errors: CodeForbidden, CodeNotFound.
func (s *Service) Revoke(ctx context.Context, p model.Principal, id uuid.UUID) (model.APIKey, error) {
	if err := authorize(p, model.ScopeKeysWrite); err != nil {
		return model.APIKey{}, err
	}
	k, err := ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) {
		return repo(tx).Revoke(ctx, id, s.clock.Now())
	})
	if err != nil {
		return model.APIKey{}, err
	}
	// After the commit: this process refuses the key at once.
	s.cache.forget(k.LookupID)
	s.audit(ctx, "api key revoked", p, k)
	return k, nil
}

// audit logs who made a change to a key: the admin, and the key they
// acted with when it was one.
func (s *Service) audit(ctx context.Context, msg string, p model.Principal, k model.APIKey) {
	attrs := []any{
		slog.String("component", "apikeys"), slog.String("workspace_id", p.WorkspaceID.String()),
		slog.String("target_api_key_id", k.ID.String()), slog.String("target_api_key_prefix", DisplayPrefix(k)),
		slog.String("by_user_id", p.UserID.String()),
	}
	if p.APIKeyID != uuid.Nil {
		attrs = append(attrs, slog.String("by_api_key_id", p.APIKeyID.String()))
	}
	s.log.InfoContext(ctx, msg, attrs...)
}

// DisplayPrefix is the part of k's secret anyone may see: Prefix and the
// lookup id, which lists show so a key can be recognised.
func DisplayPrefix(k model.APIKey) string { return Prefix + k.LookupID }
