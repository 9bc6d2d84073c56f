package work

import (
	"strings"
	"testing"
)

func TestTableShowsEachRepetitionBesideTheMedian(t *testing.T) {
	var r results
	for _, v := range []float64{3, 1, 2} {
		r.add(figure{"throughput, 256 slots", "CPU per job: postgres", millis, v, ""})
	}
	var b strings.Builder
	r.write(&b)
	want := "| throughput, 256 slots | CPU per job: postgres | 2.0 ms (1.0 ms–3.0 ms) | 3 | 3.0 ms · 1.0 ms · 2.0 ms |  |"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("want the row\n%s\nin\n%s", want, b.String())
	}
}

func TestPeerRatiosAreOnceOverRiverInOneRepetition(t *testing.T) {
	figs := []figure{
		{"throughput, 256 slots", "CPU per job: work", millis, 2.4, ""},
		{"throughput, 256 slots", "CPU per job: postgres", millis, 3, ""},
		{"throughput, 256 slots", "CPU per job: sim", millis, 0.5, ""},
		{riverScenario, "CPU per job: work", millis, 0.4, ""},
		{riverScenario, "CPU per job: postgres", millis, 0.3, ""},
		{riverScenario, "CPU per job: sim", millis, 0, ""},
	}
	got := map[string]float64{}
	for _, f := range peerRatios(figs, 300, 600) {
		got[f.name] = f.value
	}
	want := map[string]float64{"jobs/s": 0.5, "CPU per job: work": 6, "CPU per job: postgres": 10, "CPU per job: sim": 0}
	for name, v := range want {
		if d := got[name] - v; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: got %v, want %v", name, got[name], v)
		}
	}
}
