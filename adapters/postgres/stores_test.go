package postgres_test

// A store's verifications are operations on the store, which every seeded
// workspace has (seedWorkspace).
var _ = registerKindRow("stores", kindRow{})
