package app_test

// kindCases are the acceptance cases of each kind of kinds.All, by its
// event type. Each kind's own test file adds its own
// (kind_catalog_sync_test.go); the tests that range over the list fail,
// naming the kind, when one has none.
var kindCases = map[string]kindCase{}

// kindCase is what the acceptance tests run for one kind.
type kindCase struct {
	// idempotent are the cases of the kind's idempotent routes, those that
	// start its tasks among them (TestPostgresEveryIdempotentEndpoint).
	idempotent []idempotentCase
	// job is the case of its jobs given up and re-driven, the simulator
	// keeping its ledger at ledgerPath
	// (TestPostgresEveryJobThatGivesUpEndsFailedAndIsRedriven).
	job func(ledgerPath string) jobCase
}

// registerKindCases declares the cases of the kind of event type event;
// it returns true, so a kind's test file declares them at package level.
func registerKindCases(event string, c kindCase) bool {
	kindCases[event] = c
	return true
}
