package work

import (
	"slices"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
)

// keyedJob is one job of an ordering key as the outbox committed it: its
// place in the key's commit order (key_seq) and the request token its
// calls carry.
type keyedJob struct {
	key   string
	seq   int64
	token string
	// succeeded: its task ended well (its publication succeeded).
	succeeded bool
}

// orderingVerdict is what the marketplace saw of keyed jobs, against the
// outbox's commit order: every count but calls should be 0.
type orderingVerdict struct {
	calls int
	// outOfOrder counts calls of a job made after a call of a later job
	// of its key (in commit order) had started.
	outOfOrder int
	// overlaps counts calls that started while a call of another job of
	// their key was in flight; sameJobOverlaps those beside a call of the
	// same job (a redelivered copy beside the killed worker's call).
	overlaps, sameJobOverlaps int
	// lost: jobs that did not succeed; duplicates: tokens the platform
	// acted on more than once; unacted: succeeded jobs the platform has no
	// effect of.
	lost, duplicates, unacted int
	// unknown counts calls of a key carrying a token no committed job has.
	unknown int
}

// checkOrdering reads calls (per ordering key, the marketplace's spans of
// each call) and effects (per request token, how many times the
// platform acted) against jobs.
func checkOrdering(jobs []keyedJob, calls map[string][]simcore.Span, effects map[string]int) orderingVerdict {
	var v orderingVerdict
	seqOf := map[string]int64{}
	for _, j := range jobs {
		seqOf[j.key+"\x00"+j.token] = j.seq
		switch n := effects[j.token]; {
		case !j.succeeded:
			v.lost++
		case n == 0:
			v.unacted++
		}
		if effects[j.token] > 1 {
			v.duplicates++
		}
	}
	for key, spans := range calls {
		spans = slices.Clone(spans)
		slices.SortStableFunc(spans, func(a, b simcore.Span) int { return a.Start.Compare(b.Start) })
		v.calls += len(spans)
		var latest int64 // the latest job of the key whose call started
		var open []simcore.Span
		for _, s := range spans {
			seq, ok := seqOf[key+"\x00"+s.Token]
			if !ok {
				v.unknown++
				continue
			}
			if seq < latest {
				v.outOfOrder++
			}
			latest = max(latest, seq)
			open = stillOpen(open, s.Start)
			if slices.ContainsFunc(open, func(o simcore.Span) bool { return o.Token != s.Token }) {
				v.overlaps++
			} else if len(open) > 0 {
				v.sameJobOverlaps++
			}
			open = append(open, s)
		}
	}
	return v
}

// stillOpen is the spans of open still in flight at t (a span without an
// end never ended: in flight ever after).
func stillOpen(open []simcore.Span, t time.Time) []simcore.Span {
	return slices.DeleteFunc(open, func(o simcore.Span) bool { return !o.End.IsZero() && !o.End.After(t) })
}
