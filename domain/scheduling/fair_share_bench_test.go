package scheduling

import (
	"testing"

	"github.com/google/uuid"
)

// BenchmarkOrderOf2000Workspaces is the fair share's first workspace for
// one free slot while 2,000 workspaces wait, some holding slots.
func BenchmarkOrderOf2000Workspaces(b *testing.B) {
	h := NewHoldings(256)
	waiting := make([]uuid.UUID, 2000)
	served := map[uuid.UUID]uint64{}
	for i := range waiting {
		waiting[i] = uuid.New()
		served[waiting[i]] = uint64(i * 7 % 2000)
		if i%8 == 0 {
			h.Take(waiting[i])
		}
	}
	b.ReportAllocs()
	for range b.N {
		for range h.Order(waiting, served) {
			break // the first can start, as it mostly can
		}
	}
}
