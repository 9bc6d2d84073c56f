package prometheus

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
)

// WatchDestinations reports, at scrape time, what a worker's destination
// gate holds (domain/destinations): per system (a platform, "ai",
// "material") the calls in flight, the destinations throttled or with a
// breaker open, and the gate's counters; and by destination, only the
// breakers open and the destinations paused, which are few, so shops do
// not become a label of every series.
func (m *Metrics) WatchDestinations(snapshot func() []destinations.State, now func() time.Time) {
	m.registry.MustRegister(&destinationStates{snapshot: snapshot, now: now})
}

// WatchSlots reports a worker's slots at scrape time: jobs running, the
// most that ever ran at once, and messages waiting for a slot.
func (m *Metrics) WatchSlots(slots func() (running, peak, waiting int)) {
	m.registry.MustRegister(&slotGauges{slots: slots})
}

var (
	inFlightDesc    = prometheus.NewDesc("once_destination_in_flight", "Calls in flight to the destinations of a system, in this worker.", []string{"system"}, nil)
	throttledDesc   = prometheus.NewDesc("once_destination_throttled", "Destinations of a system waiting out a Retry-After now, in this worker.", []string{"system"}, nil)
	breakersDesc    = prometheus.NewDesc("once_destination_breakers_open", "Destinations of a system whose circuit breaker is open or half-open, in this worker.", []string{"system"}, nil)
	pacedDesc       = prometheus.NewDesc("once_destination_paced_waits", "Calls the pace turned away, over the destinations of a system this worker tracks now.", []string{"system"}, nil)
	throttlesDesc   = prometheus.NewDesc("once_destination_throttles", "429 answers, over the destinations of a system this worker tracks now.", []string{"system"}, nil)
	failuresDesc    = prometheus.NewDesc("once_destination_failures", "Upstream failures (5xx, timeouts), over the destinations of a system this worker tracks now.", []string{"system"}, nil)
	breakerOpenDesc = prometheus.NewDesc("once_destination_breaker_open", "1 for each destination whose breaker is open (or half-open: probing), with the seconds until its next probe.", []string{"destination", "state"}, nil)
	pausedDesc      = prometheus.NewDesc("once_destination_paused", "1 for each destination an operator paused.", []string{"destination"}, nil)
	slotsDesc       = prometheus.NewDesc("once_worker_slots", "A worker's slots: running now, peak (the most ever at once), waiting (messages waiting for one).", []string{"state"}, nil)
)

type destinationStates struct {
	snapshot func() []destinations.State
	now      func() time.Time
}

func (d *destinationStates) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{inFlightDesc, throttledDesc, breakersDesc, pacedDesc, throttlesDesc, failuresDesc, breakerOpenDesc, pausedDesc} {
		ch <- desc
	}
}

// systemTotals are one system's sums.
type systemTotals struct {
	inFlight, throttled, breakers int
	paced, throttles, failures    uint64
}

func (d *destinationStates) Collect(ch chan<- prometheus.Metric) {
	now := d.now()
	systems := map[string]*systemTotals{}
	for _, s := range d.snapshot() {
		system := model.ParseDestination(s.Destination).System
		t := systems[system]
		if t == nil {
			t = &systemTotals{}
			systems[system] = t
		}
		t.inFlight += s.InFlight
		t.paced += s.PacedWaits
		t.throttles += s.Throttles
		t.failures += s.Failures
		if s.ThrottledUntil.After(now) {
			t.throttled++
		}
		if s.Breaker != destinations.BreakerClosed {
			t.breakers++
			ch <- prometheus.MustNewConstMetric(breakerOpenDesc, prometheus.GaugeValue, 1, s.Destination, s.Breaker)
		}
		if s.Paused {
			ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, 1, s.Destination)
		}
	}
	for system, t := range systems {
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(t.inFlight), system)
		ch <- prometheus.MustNewConstMetric(throttledDesc, prometheus.GaugeValue, float64(t.throttled), system)
		ch <- prometheus.MustNewConstMetric(breakersDesc, prometheus.GaugeValue, float64(t.breakers), system)
		ch <- prometheus.MustNewConstMetric(pacedDesc, prometheus.GaugeValue, float64(t.paced), system)
		ch <- prometheus.MustNewConstMetric(throttlesDesc, prometheus.GaugeValue, float64(t.throttles), system)
		ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.GaugeValue, float64(t.failures), system)
	}
}

type slotGauges struct {
	slots func() (running, peak, waiting int)
}

func (s *slotGauges) Describe(ch chan<- *prometheus.Desc) { ch <- slotsDesc }

func (s *slotGauges) Collect(ch chan<- prometheus.Metric) {
	running, peak, waiting := s.slots()
	ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(running), "running")
	ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(peak), "peak")
	ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(waiting), "waiting")
}
