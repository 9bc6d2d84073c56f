package model

import (
	"time"

	"github.com/google/uuid"
)

// The jobs of a store's verification: the event type that asks a worker for one
// (it names the job) and the kind of the operation that tracks it (what
// users see).
const (
	EventStoreCredentialsVerify = "store.credentials.verify"
	OperationStoreVerify        = "store.verify"
)

// StoreCredentialsVerify is the payload of EventStoreCredentialsVerify: which
// store, which credential version, and the operation to move forward.
type StoreCredentialsVerify struct {
	StoreID           uuid.UUID `json:"store_id"`
	CredentialVersion int       `json:"credential_version"`
	JobOperation
}

// Task is the store the job works on (domain/jobs).
func (j StoreCredentialsVerify) Task() uuid.UUID { return j.StoreID }

// StoreStatus is where a store's authorization stands.
type StoreStatus string

const (
	StorePendingVerification StoreStatus = "pending_verification"
	StoreVerified            StoreStatus = "verified"
	StoreVerificationFailed  StoreStatus = "verification_failed"
)

// Store is a marketplace shop a workspace has connected. Its credentials are
// only ever held sealed (AES-GCM); the plaintext exists in memory while a
// request is sealing them or a worker is using them, and is never returned.
type Store struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Platform    string
	Name        string
	// ExternalShopID is the shop's id on the platform; one store per
	// (workspace, platform, shop).
	ExternalShopID string
	Status         StoreStatus
	// CredentialVersion grows by one each time the authorization is replaced,
	// so a verification job can tell it is looking at the version it was
	// created for.
	CredentialVersion int
	// SealedCredentials is the AES-GCM ciphertext of StoreCredentials.
	SealedCredentials []byte
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// StoreCredentials is the plaintext authorization for a platform. It has no
// JSON tags on purpose: it must never be serialized into a response, an event
// or a log.
type StoreCredentials struct {
	APIKey    string
	APISecret string
}

// Destination is where the calls for the store go: its platform, for its
// shop, whose quota they spend.
func (s Store) Destination() Destination {
	return Destination{System: s.Platform, Account: s.ExternalShopID}
}

// Platforms we can connect. The gateway port decides what each one means.
var Platforms = []string{"shopify", "amazon", "tiktok", "shopee", "lazada"}

// ValidPlatform reports whether p is one of Platforms.
func ValidPlatform(p string) bool {
	for _, q := range Platforms {
		if p == q {
			return true
		}
	}
	return false
}
