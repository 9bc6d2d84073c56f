package ports

import "github.com/google/uuid"

// ListQuery asks a repository for one page of the transaction's
// workspace's rows, newest first (by id: ids are time-ordered). Zero fields
// do not filter; a repository applies the filters its rows have (status
// everywhere, platform on stores, store on publications and syncs, product
// on publications and AI tasks, kind on AI tasks and operations; dead
// letters have none) and ignores the others.
type ListQuery struct {
	// StartingAfter is the cursor: only rows with a smaller id, i.e. older
	// than the last row of the previous page.
	StartingAfter uuid.UUID
	// Limit bounds the result; <= 0 returns none.
	Limit int

	Status    string
	Platform  string
	Kind      string
	StoreID   uuid.UUID
	ProductID uuid.UUID
}
