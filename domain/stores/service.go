// Package stores holds the use cases of connected marketplace stores:
// creating one and replacing its authorization (each starting a
// store.credentials.verify job), and the worker side of that job
// (VerifyHandler), which asks the platform whether the credentials work and
// records the verdict on the store and its operation.
package stores

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Service creates and reads stores.
type Service struct {
	jobs.Starter
	sealer ports.CredentialSealer
}

func NewService(uow ports.UnitOfWork, sealer ports.CredentialSealer, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{Starter: jobs.Starter{UOW: uow, Clock: clock, IDs: ids}, sealer: sealer}
}

// CreateCommand asks to connect a store.
type CreateCommand struct {
	Platform       string
	Name           string
	ExternalShopID string
	Credentials    model.StoreCredentials
}

// Created is the store and the operation that verifies its credentials.
type Created struct {
	Store     model.Store
	Operation model.Operation
}

// Create writes, in tx, the store with its credentials sealed, the operation
// that tracks verification, and the store.credentials.verify event. It runs
// inside the caller's transaction so the idempotency record commits with it.
//
// Errors: CodeValidation for bad input, CodeStoreExists if the workspace
// already connected this shop.
func (s *Service) Create(ctx context.Context, tx ports.Tx, p model.Principal, cmd CreateCommand) (Created, error) {
	if err := cmd.validate(); err != nil {
		return Created{}, err
	}
	now := s.Clock.Now()
	store := model.Store{
		ID:                s.IDs.NewID(),
		WorkspaceID:       p.WorkspaceID,
		Platform:          cmd.Platform,
		Name:              strings.TrimSpace(cmd.Name),
		ExternalShopID:    strings.TrimSpace(cmd.ExternalShopID),
		Status:            model.StorePendingVerification,
		CredentialVersion: 1,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	return s.writeToVerify(ctx, tx, p, store, cmd.Credentials, now, tx.Stores().Create)
}

// writeToVerify seals creds into store (under its credential version),
// writes the store with write, and the operation and job that verify
// those credentials.
func (s *Service) writeToVerify(ctx context.Context, tx ports.Tx, p model.Principal, store model.Store, creds model.StoreCredentials,
	now time.Time, write func(ctx context.Context, store model.Store) error,
) (Created, error) {
	var err error
	if store.SealedCredentials, err = SealCredentials(s.sealer, store, creds); err != nil {
		return Created{}, err
	}
	op, event, err := s.verifyJob(ctx, p, store, now)
	if err != nil {
		return Created{}, err
	}
	if err := write(ctx, store); err != nil {
		return Created{}, err
	}
	if err := writeVerifyJob(ctx, tx, op, event); err != nil {
		return Created{}, err
	}
	return Created{Store: store, Operation: op}, nil
}

// Get reads one store of the caller's workspace.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.Store, error) {
	return ports.Query(ctx, s.UOW, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (model.Store, error) {
		return tx.Stores().Get(ctx, id)
	})
}

func (c CreateCommand) validate() error {
	switch {
	case !model.ValidPlatform(c.Platform):
		return domain.Errorf(domain.CodeValidation, "platform must be one of %s", strings.Join(model.Platforms, ", "))
	case strings.TrimSpace(c.Name) == "":
		return domain.Errorf(domain.CodeValidation, "name must not be empty")
	case strings.TrimSpace(c.ExternalShopID) == "":
		return domain.Errorf(domain.CodeValidation, "external_shop_id must not be empty")
	}
	return validateCredentials(c.Credentials)
}

// validateCredentials refuses an incomplete authorization. The message names
// the fields, never their values.
func validateCredentials(c model.StoreCredentials) error {
	if c.APIKey == "" || c.APISecret == "" {
		return domain.Errorf(domain.CodeValidation, "credentials.api_key and credentials.api_secret are required")
	}
	return nil
}
