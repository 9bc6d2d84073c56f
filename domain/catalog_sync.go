package domain

// CodeSyncAlreadyActive is the catalog sync's own error: a start met the
// store's active sync (its live index, declared with its status and help
// in kinds.CatalogSync.Conflict); ResourceID names the active sync.
const CodeSyncAlreadyActive Code = "SYNC_ALREADY_ACTIVE"
