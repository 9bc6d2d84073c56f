package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// SecretPrefix starts every signing secret, as the Standard Webhooks
// specification writes them; the rest is the key in standard base64.
const SecretPrefix = "whsec_"

// secretBytes is the key's length: the specification asks for 24 to 64
// random bytes.
const secretBytes = 32

// NewSecret returns a new signing secret: SecretPrefix and 32 random bytes
// in standard base64.
func NewSecret() (string, error) {
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", domain.Wrap(domain.CodeInternal, err, "a webhook secret cannot be generated")
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// SecretAAD binds a sealed secret to its endpoint, workspace and version,
// so a ciphertext copied to another row, or an older version written back
// as the current one, does not open.
func SecretAAD(e model.WebhookEndpoint, version int) []byte {
	return []byte(fmt.Sprintf("webhook:%s/workspace:%s/v%d", e.ID, e.WorkspaceID, version))
}

// sealSecret encrypts secret as e's current version (e's id, workspace
// and SecretVersion set).
func sealSecret(sealer ports.CredentialSealer, e model.WebhookEndpoint, secret string) ([]byte, error) {
	sealed, err := sealer.Seal([]byte(secret), SecretAAD(e, e.SecretVersion))
	if err != nil {
		return nil, domain.Wrap(domain.CodeInternal, err, "a webhook secret cannot be sealed")
	}
	return sealed, nil
}

// openSecret decrypts sealed, e's secret of version.
func openSecret(sealer ports.CredentialSealer, e model.WebhookEndpoint, sealed []byte, version int) (string, error) {
	plain, err := sealer.Open(sealed, SecretAAD(e, version))
	if err != nil {
		return "", domain.Wrap(domain.CodeInternal, err, "a webhook secret cannot be opened")
	}
	return string(plain), nil
}
