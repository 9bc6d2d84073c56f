package queue

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
)

// BenchmarkPutBack500ShopsAtOnce is a platform's pace ending: 500 shops,
// each with one ticket set aside until then, their refusals ending at
// once in no particular order, while 1,500 later tickets wait in the
// same workspace's line.
func BenchmarkPutBack500ShopsAtOnce(b *testing.B) {
	const held, later = 500, 1500
	l := newWorkspaceLines()
	ws := uuid.New()
	var aside []*ticket
	for i := range held + later {
		t := &ticket{workspace: ws, destination: fmt.Sprintf("shopify/s%d", i), seq: uint64(i + 1)}
		l.enqueue(t)
		if i < held {
			aside = append(aside, t)
		}
	}
	ended := make([]string, held)
	for i, t := range aside {
		ended[i] = t.destination
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ended), func(i, j int) { ended[i], ended[j] = ended[j], ended[i] })
	b.ReportAllocs()
	for range b.N {
		for _, t := range aside {
			l.setAside(t, t.destination)
		}
		l.putBack(ended...)
	}
}
