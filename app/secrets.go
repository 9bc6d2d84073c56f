package app

import (
	"go.uber.org/fx"

	"github.com/oncehq/once/domain/secrets"
	"github.com/oncehq/once/ports"
)

// resealerIn are the re-seal's dependencies: Workspaces only with
// PostgreSQL (the embedded memory store lives as long as its process,
// under the one keyring it started with).
type resealerIn struct {
	fx.In
	UnitOfWork ports.UnitOfWork
	Workspaces ports.SealedSecretWorkspaces `optional:"true"`
	Sealer     ports.CredentialSealer
	Keys       ports.SealingKeys
}

// newResealer is the use case of `once secrets reseal`; nil without
// PostgreSQL.
func newResealer(in resealerIn) *secrets.Resealer {
	if in.Workspaces == nil {
		return nil
	}
	return secrets.NewResealer(in.UnitOfWork, in.Workspaces, in.Sealer, in.Keys)
}
