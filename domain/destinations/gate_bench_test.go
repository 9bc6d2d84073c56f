package destinations_test

import (
	"strconv"
	"testing"

	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
)

// BenchmarkTryDone is the gate's cost per job: one Try and one Done, over
// many accounts of a paced system.
func BenchmarkTryDone(b *testing.B) {
	g, _ := newGate(destinations.Quota{Concurrency: 10, Rate: 1e9, Burst: 1 << 30}, destinations.BreakerConfig{})
	accounts := make([]model.Destination, 10_000)
	for i := range accounts {
		accounts[i] = model.Destination{System: "shop", Account: strconv.Itoa(i)}
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if permit, _ := g.Try(accounts[i%len(accounts)]); permit != nil {
				permit.Done(succeeded)
			}
		}
	})
}
