package model

// Expiring is a kind of record the retention cleanup removes once it is
// finished and older than its retention (docs/operating.md, retention).
// Live records never expire: a pending or running operation or task, an
// event not yet delivered.
type Expiring string

// The kinds, in the order a cleanup pass removes them: dead letters
// before the operations they refer to, tasks before their operations.
// Between the two come the task tables: each kind of domain/kinds whose
// rows expire is an Expiring named by its table.
const (
	// ExpiringDeadLetters are dead-lettered outbox events, by the time
	// they became one (a redrive starts them afresh).
	ExpiringDeadLetters Expiring = "dead_letters"
	// ExpiringOperations are succeeded or failed operations that no
	// undelivered or dead-lettered event refers to.
	ExpiringOperations Expiring = "operations"
	// ExpiringMediaUploads are media still awaiting their upload long
	// after registration (domain/media's UploadExpirer). Only discovered
	// through ports.Retention: their clean-up also deletes objects.
	ExpiringMediaUploads Expiring = "media_uploads"
)
