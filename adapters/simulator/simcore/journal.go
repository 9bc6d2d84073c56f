package simcore

import (
	"fmt"

	"github.com/oncehq/once/domain"
)

// Journal keeps what a simulated system did (E: a charge, an effect)
// beyond its process; adapters/simulator/simhttp keeps it in a ledger
// file. Record is called before the system acts and before anyone can see
// the act: an error means it did not happen.
type Journal[E any] interface {
	Record(E) error
}

// Perform makes e happen: written to j first, if there is a journal, then
// applied. A journal that fails leaves e undone, and the call of system
// fails with CodeUnavailable.
func Perform[E any](j Journal[E], e E, system string, apply func(E)) error {
	if j != nil {
		if err := j.Record(e); err != nil {
			return domain.Wrap(domain.CodeUnavailable, err, "the "+system+" could not complete the call")
		}
	}
	apply(e)
	return nil
}

// Replay applies entries a Journal recorded, in order, as if they were
// performed now, and records nothing. check refuses an entry no call can
// have recorded; the error names it as noun and index ("charge 3: ...").
func Replay[E any](entries []E, noun string, check func(E) error, apply func(E)) error {
	for i, e := range entries {
		if err := check(e); err != nil {
			return fmt.Errorf("%s %d: %w", noun, i, err)
		}
		apply(e)
	}
	return nil
}
