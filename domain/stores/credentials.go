package stores

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// sealedCredentials is the plaintext layout inside the ciphertext. It exists
// only here, between sealing and opening.
type sealedCredentials struct {
	APIKey    string `json:"k"`
	APISecret string `json:"s"`
}

// CredentialAAD binds a ciphertext to its store, workspace and version, so a
// sealed blob copied to another row or replayed from an older version does
// not open.
func CredentialAAD(s model.Store) []byte {
	return []byte(fmt.Sprintf("store:%s/workspace:%s/v%d", s.ID, s.WorkspaceID, s.CredentialVersion))
}

// SealCredentials encrypts creds for store (id, workspace and version set).
func SealCredentials(sealer ports.CredentialSealer, store model.Store, creds model.StoreCredentials) ([]byte, error) {
	plain, err := json.Marshal(sealedCredentials{APIKey: creds.APIKey, APISecret: creds.APISecret})
	if err != nil {
		return nil, domain.Wrap(domain.CodeInternal, err, "credentials cannot be encoded")
	}
	sealed, err := sealer.Seal(plain, CredentialAAD(store))
	if err != nil {
		return nil, domain.Wrap(domain.CodeInternal, err, "credentials cannot be sealed")
	}
	return sealed, nil
}

// OpenCredentials decrypts store's credentials for a worker about to use them.
func OpenCredentials(sealer ports.CredentialSealer, store model.Store) (model.StoreCredentials, error) {
	plain, err := sealer.Open(store.SealedCredentials, CredentialAAD(store))
	if err != nil {
		return model.StoreCredentials{}, domain.Wrap(domain.CodeInternal, err, "credentials cannot be opened")
	}
	var c sealedCredentials
	if err := json.Unmarshal(plain, &c); err != nil {
		return model.StoreCredentials{}, domain.Wrap(domain.CodeInternal, err, "credentials cannot be decoded")
	}
	return model.StoreCredentials{APIKey: c.APIKey, APISecret: c.APISecret}, nil
}

// Credentials opens store's credentials for a job about to call the
// platform. A failure is a keyring problem for operators to fix, not the
// user's: it is logged and marked for the job to be retried (jobs.Retry),
// so the task stays running.
func Credentials(sealer ports.CredentialSealer, store model.Store, log *slog.Logger) (model.StoreCredentials, error) {
	creds, err := OpenCredentials(sealer, store)
	if err != nil {
		log.Error("store credentials cannot be opened", "error", domain.SanitizeError(err))
		return creds, jobs.Retry(err)
	}
	return creds, nil
}
