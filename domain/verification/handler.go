package verification

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// Reasons recorded on an operation that did not succeed. They are shown to
// users, so they say what happened without any detail of the credentials.
const (
	ReasonSuperseded    = "superseded by a newer authorization"
	ReasonStoreNotFound = "the store no longer exists"
	ReasonRejected      = "the platform rejected the credentials"
	reasonPlatformError = "the platform could not verify the credentials"
)

// Handler verifies a store's credentials for one store.credentials.verify
// message. It is re-entrant: the operation's state says whether the work is
// done, and the operation id is the platform request token, so a
// redelivered message never verifies twice on the platform, even when the
// first delivery died after the platform had acted.
//
// The steps, each its own transaction so nothing is held open while the
// platform is called:
//
//  1. read the operation and the store; an operation already succeeded or
//     failed means a duplicate delivery: done. A store whose credential
//     version is not the one the event was written for means the
//     authorization was replaced since: the operation fails with
//     ReasonSuperseded (the newer version has its own operation and event)
//     and the store is left alone. Otherwise the operation becomes running.
//  2. call the platform, outside any transaction.
//  3. check again that the operation is unfinished and the version
//     unchanged, then record the verdict: store verified or
//     verification_failed, operation succeeded or failed with the
//     platform's (sanitized) reason.
//
// Errors: a transport failure (CodeUnavailable), a cancelled context or a
// credential that cannot be opened are returned as they are, so the message
// is delivered again; the operation stays running. A message that can never
// succeed (not this event type, a payload that does not decode, an
// operation that does not exist or does not belong to the store) is
// CodeValidation or CodeNotFound, which the worker gives up on at once. A
// permanent platform error ends the operation failed and returns nil.
type Handler struct {
	uow     ports.UnitOfWork
	gateway ports.PlatformGateway
	sealer  ports.CredentialSealer
	clock   ports.Clock
	log     *slog.Logger
}

var _ ports.MessageHandler = (*Handler)(nil)

// NewHandler builds the handler; log may be nil.
func NewHandler(uow ports.UnitOfWork, gateway ports.PlatformGateway, sealer ports.CredentialSealer, clock ports.Clock, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{uow: uow, gateway: gateway, sealer: sealer, clock: clock, log: log.With("handler", domain.EventStoreCredentialsVerify)}
}

// Handle processes one delivery; see Handler.
func (h *Handler) Handle(ctx context.Context, msg ports.Message) error {
	job, err := decode(msg)
	if err != nil {
		return err
	}
	log := h.log.With("message", msg.ID, "workspace", msg.WorkspaceID, "operation", job.OperationID, "store", job.StoreID)

	store, proceed, err := h.start(ctx, msg.WorkspaceID, job, log)
	if err != nil || !proceed {
		return err
	}

	creds, err := stores.OpenCredentials(h.sealer, store)
	if err != nil {
		// A keyring problem for operators to fix, not the user's: keep the
		// operation running and let the message be retried.
		log.Error("store credentials cannot be opened", "error", domain.SanitizeError(err))
		return err
	}
	result, err := h.gateway.VerifyCredentials(ctx, ports.VerifyCredentialsRequest{
		RequestToken:   job.OperationID.String(),
		Platform:       store.Platform,
		ExternalShopID: store.ExternalShopID,
		Credentials:    creds,
	})
	if err != nil {
		if platformerr.Retryable(ctx, err) {
			log.Warn("platform unavailable, verification will be retried", "error", domain.SanitizeError(err))
			return err
		}
		log.Error("platform refused the verification", "error", domain.SanitizeError(err))
		result = ports.VerifyCredentialsResult{Valid: false, Reason: platformerr.Reason(reasonPlatformError, err)}
	}
	return h.finish(ctx, msg.WorkspaceID, job, result, log)
}

// decode reads and checks the payload.
func decode(msg ports.Message) (domain.StoreCredentialsVerify, error) {
	return jobs.Decode(msg, domain.EventStoreCredentialsVerify, func(j domain.StoreCredentialsVerify) bool {
		return j.StoreID != uuid.Nil && j.OperationID != uuid.Nil && j.CredentialVersion > 0
	})
}

// start is step 1. proceed is false when there is nothing (more) to do.
func (h *Handler) start(ctx context.Context, ws uuid.UUID, job domain.StoreCredentialsVerify, log *slog.Logger) (store domain.Store, proceed bool, err error) {
	err = jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		proceed = false
		op, err := jobs.Operation(ctx, tx, job.OperationID, domain.OperationStoreVerify, job.StoreID)
		if err != nil {
			return err
		}
		if op.Finished() {
			log.Info("operation already finished: duplicate delivery", "status", op.Status)
			return nil
		}
		store, err = tx.Stores().Get(ctx, job.StoreID)
		if domain.IsCode(err, domain.CodeNotFound) {
			log.Warn("store not found, operation failed")
			return h.fail(ctx, tx, op, ReasonStoreNotFound)
		}
		if err != nil {
			return err
		}
		if store.CredentialVersion != job.CredentialVersion {
			log.Info("credentials replaced since the job was written, operation superseded",
				"job_version", job.CredentialVersion, "store_version", store.CredentialVersion)
			return h.fail(ctx, tx, op, ReasonSuperseded)
		}
		proceed = true
		if op.Status == domain.OperationRunning {
			return nil // a redelivery after a failed attempt
		}
		op.Start(h.clock.Now())
		return tx.Operations().Update(ctx, op)
	})
	if err != nil {
		return domain.Store{}, false, err
	}
	return store, proceed, nil
}

// finish is step 3.
func (h *Handler) finish(ctx context.Context, ws uuid.UUID, job domain.StoreCredentialsVerify, result ports.VerifyCredentialsResult, log *slog.Logger) error {
	return jobs.Transact(ctx, h.uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		op, err := jobs.Operation(ctx, tx, job.OperationID, domain.OperationStoreVerify, job.StoreID)
		if err != nil {
			return err
		}
		if op.Finished() {
			log.Info("operation finished by a concurrent delivery", "status", op.Status)
			return nil
		}
		store, err := tx.Stores().Get(ctx, job.StoreID)
		if domain.IsCode(err, domain.CodeNotFound) {
			return h.fail(ctx, tx, op, ReasonStoreNotFound)
		}
		if err != nil {
			return err
		}
		if store.CredentialVersion != job.CredentialVersion {
			log.Info("credentials replaced during verification, verdict discarded")
			return h.fail(ctx, tx, op, ReasonSuperseded)
		}
		now := h.clock.Now()
		store.UpdatedAt = now
		if result.Valid {
			store.Status = domain.StoreVerified
		} else {
			store.Status = domain.StoreVerificationFailed
		}
		if err := tx.Stores().Update(ctx, store); err != nil {
			return err
		}
		if result.Valid {
			op.Succeed(now)
			log.Info("store verified")
			return tx.Operations().Update(ctx, op)
		}
		reason := domain.SanitizeText(result.Reason)
		if reason == "" {
			reason = ReasonRejected
		}
		log.Info("store verification failed", "reason", reason)
		return h.fail(ctx, tx, op, reason)
	})
}

func (h *Handler) fail(ctx context.Context, tx ports.Tx, op domain.Operation, reason string) error {
	op.Fail(reason, h.clock.Now())
	return tx.Operations().Update(ctx, op)
}
