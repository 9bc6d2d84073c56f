package kinds

// Retention is a kind's retention rule. Every kind declares one: a kind
// without one would keep its finished rows for ever, and app's check of
// the kinds refuses it.
type Retention int

const (
	// Undeclared is the zero value: no rule said, refused.
	Undeclared Retention = iota
	// KeptWithRow: the kind's tasks are operations on a row that outlives
	// them (a store, a media), removed with it; the operations retention
	// removes the operations.
	KeptWithRow
	// ExpiresFinished: a succeeded or failed row goes after the task
	// retention.
	ExpiresFinished
	// ExpiresFailed: only a failed row goes; a succeeded one is a record
	// kept (a publication says the product is listed).
	ExpiresFailed
)

// Expires reports whether the kind's rows expire with the task retention.
func (r Retention) Expires() bool { return r == ExpiresFinished || r == ExpiresFailed }

// FinishedStatuses are the statuses of a row that may expire.
func (r Retention) FinishedStatuses() []string {
	switch r {
	case ExpiresFinished:
		return []string{"succeeded", "failed"}
	case ExpiresFailed:
		return []string{"failed"}
	}
	return nil
}

// Expiring are the kinds whose rows expire with the task retention, in
// the order of the list.
func Expiring() []Kind {
	var out []Kind
	for _, k := range All {
		if k.Retention.Expires() {
			out = append(out, k)
		}
	}
	return out
}
