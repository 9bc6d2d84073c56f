package model

// Expiring is a kind of record the retention cleanup removes once it is
// finished and older than its retention (docs/operating.md, retention).
// Live records never expire: a pending or running operation or task, an
// event not yet delivered.
type Expiring string

// The kinds, in the order a cleanup pass removes them: dead letters
// before the operations they refer to, tasks before their operations.
const (
	// ExpiringDeadLetters are dead-lettered outbox events, by the time
	// they became one (a redrive starts them afresh).
	ExpiringDeadLetters Expiring = "dead_letters"
	// The task tables: finished catalog syncs, material transfers (with
	// their items), failed publications (a succeeded one is the record
	// that the product is listed: kept) and AI tasks without a billing
	// record (a billed one stays with its record).
	ExpiringCatalogSyncs      Expiring = "catalog_syncs"
	ExpiringMaterialTransfers Expiring = "material_transfers"
	ExpiringPublications      Expiring = "publications"
	ExpiringAITasks           Expiring = "ai_tasks"
	// ExpiringOperations are succeeded or failed operations that no
	// undelivered or dead-lettered event refers to.
	ExpiringOperations Expiring = "operations"
)

// ExpiringTasks are the kinds that follow the task retention.
var ExpiringTasks = []Expiring{ExpiringCatalogSyncs, ExpiringMaterialTransfers, ExpiringPublications, ExpiringAITasks}
