// Package secrets seals the secrets kept at rest again under the newest
// key of the keyring (`once secrets reseal`), so that an older key can be
// retired: add the new key first, roll it out, re-seal, then remove the
// old key (docs/operating.md).
package secrets

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// Kind is a kind of sealed secret, as the report counts them.
type Kind string

// The kinds of sealed secret.
const (
	// StoreCredentials are a store's platform credentials.
	StoreCredentials Kind = "store_credentials"
	// WebhookSecrets are a webhook endpoint's signing secrets: the
	// current one and, after a rotation, the one it replaced.
	WebhookSecrets Kind = "webhook_secrets"
)

// kinds is every kind of sealed secret, each with how its rows are read:
// a pass visits them in this order. A new table holding a sealed secret
// adds its line here.
var kinds = []kind{
	{StoreCredentials, storeRows},
	{WebhookSecrets, webhookRows},
}

// Kinds lists the kinds of sealed secret, in the order a pass visits them.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return out
}

type kind struct {
	name Kind
	// rows reads, in tx, up to limit rows of the kind whose id is greater
	// than after, in id order, locked until tx ends.
	rows func(ctx context.Context, tx ports.Tx, after uuid.UUID, limit int) ([]sealedRow, error)
}

// sealedRow is one row holding sealed secrets: its ciphertexts, each with
// what binds it, and how the row is written back.
type sealedRow struct {
	id      uuid.UUID
	secrets []sealedField
	save    func(ctx context.Context, tx ports.Tx) error
}

// sealedField is one ciphertext of a row. ciphertext points into the row
// that save writes.
type sealedField struct {
	name       string
	ciphertext *[]byte
	aad        []byte
}

func storeRows(ctx context.Context, tx ports.Tx, after uuid.UUID, limit int) ([]sealedRow, error) {
	read, err := ports.Repository[ports.SealedSecretRows](tx).StoresAfter(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]sealedRow, 0, len(read))
	for i := range read {
		s := &read[i]
		out = append(out, sealedRow{
			id:      s.ID,
			secrets: []sealedField{{"credentials", &s.SealedCredentials, stores.CredentialAAD(*s)}},
			// The row as read, its ciphertext replaced: updated_at and
			// the credential version stay, so the re-seal is invisible
			// to the API.
			save: func(ctx context.Context, tx ports.Tx) error { return tx.Stores().Update(ctx, *s) },
		})
	}
	return out, nil
}

func webhookRows(ctx context.Context, tx ports.Tx, after uuid.UUID, limit int) ([]sealedRow, error) {
	read, err := ports.Repository[ports.SealedSecretRows](tx).WebhookEndpointsAfter(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]sealedRow, 0, len(read))
	for i := range read {
		e := &read[i]
		fields := []sealedField{{"secret", &e.SealedSecret, webhooks.SecretAAD(*e, e.SecretVersion)}}
		// The previous secret is sealed as the version before the
		// current one, and re-sealed whether or not its overlap is
		// over: a retired key must open nothing that is kept.
		if e.SealedPreviousSecret != nil {
			fields = append(fields, sealedField{"previous_secret", &e.SealedPreviousSecret, webhooks.SecretAAD(*e, e.SecretVersion-1)})
		}
		out = append(out, sealedRow{
			id: e.ID, secrets: fields,
			save: func(ctx context.Context, tx ports.Tx) error {
				return ports.Repository[ports.WebhookEndpointRepository](tx).Update(ctx, *e)
			},
		})
	}
	return out, nil
}

// Resealer seals every stored secret again under the sealing key.
type Resealer struct {
	uow        ports.UnitOfWork
	workspaces ports.SealedSecretWorkspaces
	sealer     ports.CredentialSealer
	keys       ports.SealingKeys
}

// NewResealer builds the re-seal over the workspaces' rows. sealer and
// keys are one keyring: the one the re-seal seals with (its first key) and
// opens with (all of them).
func NewResealer(uow ports.UnitOfWork, workspaces ports.SealedSecretWorkspaces, sealer ports.CredentialSealer, keys ports.SealingKeys) *Resealer {
	return &Resealer{uow: uow, workspaces: workspaces, sealer: sealer, keys: keys}
}

// Pass bounds one run.
type Pass struct {
	// Batch is how many rows one transaction re-seals (and how many
	// workspace ids are listed at a time).
	Batch int
	// MaxBatches stops the run after this many batches that re-sealed
	// something; 0: no bound. What was committed stays; a later run goes
	// on with the rest.
	MaxBatches int
}

// Report is what a run did, per kind.
type Report struct {
	// SealingKey is the key the secrets are sealed under now.
	SealingKey string
	// Resealed counts the ciphertexts sealed again under SealingKey.
	Resealed map[Kind]int
	// Current counts the ciphertexts under SealingKey already, left as
	// they were.
	Current map[Kind]int
	// Stopped says the run stopped at Pass.MaxBatches: secrets under
	// older keys may be left for the next run.
	Stopped bool
}

// maxListed bounds how many rows an unknown-key refusal names.
const maxListed = 20

// Run checks that every stored secret names a key of the keyring, then
// seals every one that is not under the sealing key again, a batch of
// rows per transaction, workspace by workspace and kind by kind (each
// workspace's rows under row-level security). A run killed in the middle
// loses nothing (every committed batch is sealed under the new key, every
// other row is still under its old one, and the keyring opens both); the
// next run skips what is current and goes on with the rest, so a second
// run after a complete one re-seals nothing.
//
// Errors: CodeValidation for a Pass without a positive Batch;
// CodeInvalidState, naming the rows (kind, workspace, id, field, key), when
// stored secrets name keys the keyring does not hold: nothing is
// re-sealed then, since a key missing from the keyring is one some
// process may still be sealing with; the store's errors as they are.
func (r *Resealer) Run(ctx context.Context, pass Pass) (Report, error) {
	if pass.Batch <= 0 {
		return Report{}, domain.Errorf(domain.CodeValidation, "the re-seal's batch must be positive, not %d", pass.Batch)
	}
	if err := r.checkKeys(ctx, pass.Batch); err != nil {
		return Report{}, err
	}
	report := Report{SealingKey: r.keys.SealingKey(), Resealed: map[Kind]int{}, Current: map[Kind]int{}}
	batches := 0
	err := r.eachBatch(ctx, pass.Batch, func(ctx context.Context, tx ports.Tx, ws uuid.UUID, k Kind, rows []sealedRow) (func() bool, error) {
		resealed, current, err := r.reseal(ctx, tx, ws, k, rows)
		if err != nil {
			return nil, err
		}
		// Counted once the batch committed.
		return func() bool {
			report.Resealed[k] += resealed
			report.Current[k] += current
			if resealed > 0 {
				batches++
			}
			report.Stopped = pass.MaxBatches > 0 && batches >= pass.MaxBatches
			return !report.Stopped
		}, nil
	})
	return report, err
}

// reseal seals, in tx, each ciphertext of rows that is not under the
// sealing key again, bound to the same data, and saves the rows it
// changed. It says how many it re-sealed and how many were current.
func (r *Resealer) reseal(ctx context.Context, tx ports.Tx, ws uuid.UUID, k Kind, rows []sealedRow) (resealed, current int, err error) {
	for _, row := range rows {
		changed := false
		for _, f := range row.secrets {
			id, held, err := r.keys.KeyOf(*f.ciphertext)
			switch {
			case err != nil:
				return 0, 0, rowError(err, k, ws, row.id, f.name)
			case id == r.keys.SealingKey():
				current++
				continue
			case !held:
				// Written since the check, by a process with another
				// keyring.
				return 0, 0, domain.Errorf(domain.CodeInvalidState, "%s: sealed with key %q, which the keyring does not hold", rowName(k, ws, row.id, f.name), id)
			}
			plain, err := r.sealer.Open(*f.ciphertext, f.aad)
			if err != nil {
				return 0, 0, rowError(err, k, ws, row.id, f.name)
			}
			sealed, err := r.sealer.Seal(plain, f.aad)
			clear(plain)
			if err != nil {
				return 0, 0, rowError(err, k, ws, row.id, f.name)
			}
			*f.ciphertext = sealed
			changed = true
			resealed++
		}
		if changed {
			if err := row.save(ctx, tx); err != nil {
				return 0, 0, err
			}
		}
	}
	return resealed, current, nil
}

// checkKeys reads every stored secret's key id and refuses, naming the
// rows, those the keyring does not hold.
func (r *Resealer) checkKeys(ctx context.Context, batch int) error {
	var unknown []string
	n := 0
	err := r.eachBatch(ctx, batch, func(_ context.Context, _ ports.Tx, ws uuid.UUID, k Kind, rows []sealedRow) (func() bool, error) {
		var found []string
		for _, row := range rows {
			for _, f := range row.secrets {
				id, held, err := r.keys.KeyOf(*f.ciphertext)
				if err != nil {
					return nil, rowError(err, k, ws, row.id, f.name)
				}
				if !held {
					found = append(found, fmt.Sprintf("%s (key %q)", rowName(k, ws, row.id, f.name), id))
				}
			}
		}
		return func() bool {
			n += len(found)
			unknown = append(unknown, found[:min(len(found), maxListed-len(unknown))]...)
			return true
		}, nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > len(unknown) {
		more = fmt.Sprintf("; and %d more", n-len(unknown))
	}
	return domain.Errorf(domain.CodeInvalidState,
		"%d stored secrets are sealed with keys ONCE_CREDENTIAL_KEYS does not hold; add those keys (after the sealing key) and run again: %s%s",
		n, strings.Join(unknown, "; "), more)
}

// eachBatch runs fn on every batch of rows of every kind of every
// workspace, each batch in a transaction of its own. fn returns what to
// do once its transaction committed, which says whether to go on.
func (r *Resealer) eachBatch(ctx context.Context, batch int,
	fn func(ctx context.Context, tx ports.Tx, ws uuid.UUID, k Kind, rows []sealedRow) (func() bool, error),
) error {
	after := uuid.Nil
	for {
		page, err := r.workspaces.WorkspacesAfter(ctx, after, batch)
		if err != nil {
			return err
		}
		for _, ws := range page {
			for _, k := range kinds {
				goOn, err := r.eachBatchOf(ctx, batch, ws, k, fn)
				if err != nil || !goOn {
					return err
				}
			}
		}
		if len(page) < batch {
			return nil
		}
		after = page[len(page)-1]
	}
}

// eachBatchOf is eachBatch over one kind of one workspace.
func (r *Resealer) eachBatchOf(ctx context.Context, batch int, ws uuid.UUID, k kind,
	fn func(ctx context.Context, tx ports.Tx, ws uuid.UUID, k Kind, rows []sealedRow) (func() bool, error),
) (bool, error) {
	cursor := uuid.Nil
	for {
		var read int
		var committed func() bool
		err := r.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
			rows, err := k.rows(ctx, tx, cursor, batch)
			if err != nil {
				return err
			}
			if read = len(rows); read > 0 {
				cursor = rows[read-1].id
			}
			committed, err = fn(ctx, tx, ws, k.name, rows)
			return err
		})
		if err != nil {
			return false, err
		}
		if !committed() {
			return false, nil
		}
		if read < batch {
			return true, nil
		}
	}
}

func rowName(k Kind, ws, id uuid.UUID, field string) string {
	return fmt.Sprintf("%s workspace %s row %s %s", k, ws, id, field)
}

func rowError(err error, k Kind, ws, id uuid.UUID, field string) error {
	return domain.Wrap(domain.CodeInternal, err, rowName(k, ws, id, field)+": cannot be re-sealed")
}
