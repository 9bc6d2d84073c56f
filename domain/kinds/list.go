package kinds

// All are the kinds of background task, one line each; each kind's
// descriptor is declared in its own file of this package. Adding a kind
// is its own files and its line here (docs/architecture.md, "Adding a
// task type"); app's check of the kinds fails until each is fully wired.
var All = []Kind{
	StoreVerify,
	MediaProcess,
	MaterialTransfer,
	ListingPublish,
	CatalogSync,
	AITask,
}
