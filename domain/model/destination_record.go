package model

// DestinationRecord is what the fleet of workers keeps of one destination
// (a seller's account, or a platform as a whole): the state its Gate
// encodes (pace, breaker, pause) and the version of that state, which
// every write compares and moves on, so of two workers writing from the
// same version exactly one wins. Version 0 is a destination nobody wrote
// yet; its State is empty.
type DestinationRecord struct {
	Version int64
	State   []byte
}
