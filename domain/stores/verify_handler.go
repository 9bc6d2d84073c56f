package stores

import (
	"context"
	"log/slog"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
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

// VerifyHandler verifies a store's credentials for one store.credentials.verify
// message (the lifecycle is jobs.Job over the operation, jobs.OnOperation).
// The operation's state says whether the work is done, and the job's
// request token (derived from the request that started it; the operation
// id for a job that has none, domain/model/request_token.go) goes to the
// platform, so a redelivered message never verifies twice on the platform,
// even when the first delivery died after the platform had acted, nor does
// a create executed again after its first commit was lost.
//
// In step 1 and again in step 3, a store whose credential version is not
// the one the event was written for means the authorization was replaced
// since: the operation fails with ReasonSuperseded (the newer version has
// its own operation and event) and the store is left alone; a store gone
// fails it with ReasonStoreNotFound. Step 2 opens the credentials (a
// failure is retried: the keyring is for operators to fix) and asks the
// platform. Step 3 records the verdict: store verified or
// verification_failed, operation succeeded or failed with the platform's
// (sanitized) reason.
type VerifyHandler = jobs.Handler[model.StoreCredentialsVerify, model.Store, struct{}]

// NewVerifyHandler builds the handler; log may be nil.
func NewVerifyHandler(uow ports.UnitOfWork, gateway ports.PlatformGateway, sealer ports.CredentialSealer, clock ports.Clock, log *slog.Logger) *VerifyHandler {
	op := jobs.OnOperation[model.StoreCredentialsVerify, model.Store, struct{}]{
		Kind: VerifyTask.OperationKind, Check: checkVerification, Record: recordVerification,
	}
	call := func(ctx context.Context, log *slog.Logger, run jobs.Run[model.StoreCredentialsVerify], store model.Store) (struct{}, error) {
		creds, err := Credentials(sealer, store, log)
		if err != nil {
			return struct{}{}, err
		}
		result, err := gateway.VerifyCredentials(ctx, ports.VerifyCredentialsRequest{
			RequestToken: run.Job.TokenOr(run.OperationID), Platform: store.Platform,
			ExternalShopID: store.ExternalShopID, Credentials: creds,
		})
		if err == nil && !result.Valid {
			reason := domain.SanitizeText(result.Reason)
			if reason == "" {
				reason = ReasonRejected
			}
			return struct{}{}, jobs.Fail(reason)
		}
		return struct{}{}, err
	}
	return jobs.NewHandler(jobs.Job[model.StoreCredentialsVerify, model.Store, struct{}]{
		Event: VerifyTask.EventType, Noun: "store", External: "platform", Refused: reasonPlatformError,
		Valid: func(j model.StoreCredentialsVerify) bool { return j.CredentialVersion > 0 },
		Begin: op.Begin, Call: call, End: op.End,
	}, uow, clock, log)
}

// check reads the store the job verifies; a store gone or whose
// credentials were replaced ends the operation.
func checkVerification(ctx context.Context, tx ports.Tx, log *slog.Logger, run jobs.Run[model.StoreCredentialsVerify], op model.Operation, now time.Time) (model.Store, bool, error) {
	store, err := tx.Stores().Get(ctx, run.TaskID)
	if domain.IsCode(err, domain.CodeNotFound) {
		log.Warn("store not found, operation failed")
		return store, true, jobs.EndOperation(ctx, tx, op, ReasonStoreNotFound, now)
	}
	if err != nil {
		return store, false, err
	}
	if store.CredentialVersion != run.Job.CredentialVersion {
		log.Info("credentials replaced since the job was written, operation superseded",
			"job_version", run.Job.CredentialVersion, "store_version", store.CredentialVersion)
		return store, true, jobs.EndOperation(ctx, tx, op, ReasonSuperseded, now)
	}
	return store, false, nil
}

// recordVerification is step 3: the verdict on the store.
func recordVerification(ctx context.Context, tx ports.Tx, log *slog.Logger, store model.Store, _ struct{}, reason string, now time.Time) error {
	store.UpdatedAt = now
	if reason == "" {
		store.Status = model.StoreVerified
		log.Info("store verified")
	} else {
		store.Status = model.StoreVerificationFailed
		log.Info("store verification failed", "reason", reason)
	}
	return tx.Stores().Update(ctx, store)
}
