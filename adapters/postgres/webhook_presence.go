package postgres

// endpointPresence is what one transaction learnt of its workspace's
// webhook endpoints without reading them: every operation's end looks up
// the endpoints subscribed to it (webhooks.OperationEnded), and most
// workspaces have none, so that look-up was a statement per job that found
// nothing. The UPDATE that writes an operation returns, in the same
// statement, whether the workspace has any enabled endpoint
// (updateOperation); when it has none, Subscribed answers none without a
// statement of its own.
//
// A job's end reads the presence at the start of its transaction instead
// (Tx.PrefetchJobEnd), before its UPDATE, which it sends with the COMMIT.
// Found none, it announces nothing, and that UPDATE checks again: an
// endpoint enabled since (while the end recorded its outcome) rolls the
// end back, to run again (updateOperationRefusing), so whether an end is
// announced is still decided as of the UPDATE that ends the operation.
//
// That read sees the rows committed when its statement started, a round
// trip before the COMMIT: an endpoint committed in between is one
// committed just as the operation ended, which a look-up of its own could
// miss as well. An endpoint this transaction writes itself makes the
// presence unknown again.
type endpointPresence struct {
	known bool // an UPDATE of an operation said
	any   bool // the workspace had an enabled endpoint
}

// none says the workspace is known to have no enabled endpoint.
func (p *endpointPresence) none() bool { return p != nil && p.known && !p.any }

// saw records what an UPDATE of an operation returned.
func (p *endpointPresence) saw(any bool) {
	if p != nil {
		p.known, p.any = true, any
	}
}

// forget makes the presence unknown (the transaction wrote an endpoint).
func (p *endpointPresence) forget() {
	if p != nil {
		p.known = false
	}
}
