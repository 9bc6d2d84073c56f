package storm

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is what one bench measured, scenario by scenario; a scenario not
// run is empty.
type Report struct {
	Storms  []stormResult
	Replays []replayResult
	Outage  []outageResult
	Restart []restartResult
}

// The targets every storm run must meet, as the result column judges them.
const (
	stormMaxLatency = time.Second
	targetsLegend   = "Targets (every run must meet them): storm → 1 execution, 0 × 5xx or no answer, max latency < 1 s, " +
		"peak pool connections ≤ the configured pool; replays → 100 % the saved response; " +
		"outage → 0 dead letters, 0 lost, backlog drained, no process ended; " +
		"restart → every process still running (none restarted by the bench), requests accepted again, every request accepted, backlog drained, 0 lost."
	columnsLegend = "Columns: runs are repetitions (storm and replays interleaved; outage and restart run once), figures are the median with (min–max) when runs differ. " +
		"Executions are rows the requests created, counted in the database (storm, replays: media; outage, restart: stores). " +
		"Answers by status count every answer, retries included (none = no answer). Latency is per answer. " +
		"Peak DB connections are the sessions of the service's login role in pg_stat_activity, sampled every 5 ms, summed over its processes; " +
		"LISTEN sessions (one per process that dispatches) are held outside the pool and counted apart. " +
		"Events: delivered = the job ran (its operation ended), waiting = still pending in the outbox, " +
		"lost = neither delivered, dead-lettered nor waiting at the end of the drain wait."
)

// row is one line of the table.
type row struct {
	scenario, runs, executions, answers, p50, p99, max, conns, lost, dead, details, result string
}

func (r Report) rows(pool string) []row {
	var rows []row
	if len(r.Storms) > 0 {
		rows = append(rows, stormRow(r.Storms, pool))
	}
	if len(r.Replays) > 0 {
		rows = append(rows, replayRow(r.Replays))
	}
	for _, o := range r.Outage {
		rows = append(rows, outageRow(o))
	}
	for _, s := range r.Restart {
		rows = append(rows, restartRow(s))
	}
	return rows
}

func stormRow(runs []stormResult, pool string) row {
	var fails []string
	for _, s := range runs {
		fails = appendIf(fails, s.Executions != 1, "executions ≠ 1")
		fails = appendIf(fails, failures(s.Answers) > 0, "5xx")
		fails = appendIf(fails, s.Latency.Max >= stormMaxLatency, "max ≥ 1 s")
		fails = appendIf(fails, s.PoolLimit == 0, "pool unbounded")
		fails = appendIf(fails, s.PoolLimit > 0 && s.Conns.Pool > s.PoolLimit, "connections > pool")
	}
	answers := make([]map[int]int, len(runs))
	for i, s := range runs {
		answers[i] = s.Answers
	}
	r := row{
		scenario:   fmt.Sprintf("storm: %d identical requests at once", runs[0].Requests),
		runs:       fmt.Sprint(len(runs)),
		executions: spreadOfInts(runs, func(s stormResult) int { return s.Executions }).Format(count),
		answers:    formatAnswers(answers),
		conns: connsCell(spreadOfInts(runs, func(s stormResult) int { return s.Conns.Pool }),
			spreadOfInts(runs, func(s stormResult) int { return s.Conns.Listen })) + "; pool " + pool,
		lost: "–", dead: "–", details: "–",
		result: verdict(fails),
	}
	r.p50, r.p99, r.max = latencyCells(runs, func(s stormResult) latencies { return s.Latency })
	return r
}

func replayRow(runs []replayResult) row {
	var fails []string
	for _, s := range runs {
		fails = appendIf(fails, s.Saved != s.Replays, "replays not saved")
	}
	answers := make([]map[int]int, len(runs))
	share := make([]float64, len(runs))
	for i, s := range runs {
		answers[i], share[i] = s.Answers, s.SavedShare()
	}
	r := row{
		scenario:   fmt.Sprintf("replays: %d completed keys × %d at once", runs[0].Keys, runs[0].Concurrency),
		runs:       fmt.Sprint(len(runs)),
		executions: spreadOfInts(runs, func(s replayResult) int { return s.Executions }).Format(count),
		answers:    formatAnswers(answers),
		conns: connsCell(spreadOfInts(runs, func(s replayResult) int { return s.Conns.Pool }),
			spreadOfInts(runs, func(s replayResult) int { return s.Conns.Listen })),
		lost: "–", dead: "–",
		details: "saved response " + spreadOf(share).Format(percent),
		result:  verdict(fails),
	}
	r.p50, r.p99, r.max = latencyCells(runs, func(s replayResult) latencies { return s.Latency })
	return r
}

func outageRow(o outageResult) row {
	details := fmt.Sprintf("%d of %d requests accepted; %s; broker back → drained: %s",
		o.Accepted, o.Requests, eventsCell(o.Backlog), drainCell(o.loadRun))
	return loadRow(fmt.Sprintf("outage: broker cut for %s", o.Outage), o.loadRun, details, loadFailures(o.loadRun))
}

func restartRow(s restartResult) row {
	fails := loadFailures(s.loadRun)
	fails = appendIf(fails, !s.Recovered, "no request accepted after the restart")
	fails = appendIf(fails, s.GaveUp() > 0 || s.Refused > 0, "requests not accepted")
	recovery := "never"
	if s.Recovered {
		recovery = s.Recovery.Round(time.Millisecond).String()
	}
	details := fmt.Sprintf("PostgreSQL down %s; first request accepted %s after it was back; %d of %d requests accepted; %s; back → drained: %s",
		s.Down.Round(time.Millisecond), recovery, s.Accepted, s.Requests, eventsCell(s.Backlog), drainCell(s.loadRun))
	return loadRow("restart: PostgreSQL stopped and started under load", s.loadRun, details, fails)
}

func loadFailures(a loadRun) []string {
	var fails []string
	fails = appendIf(fails, a.Backlog.DeadLetters > 0, "dead letters")
	fails = appendIf(fails, a.Backlog.Lost() != 0, "lost")
	fails = appendIf(fails, !a.Drained, "not drained")
	for _, p := range a.Processes {
		fails = appendIf(fails, p.State != "running", p.Name+" ended")
	}
	return fails
}

func loadRow(scenario string, a loadRun, details string, fails []string) row {
	one := func(v int) spread { return spreadOf([]float64{float64(v)}) }
	return row{
		scenario:   scenario,
		runs:       "1 (once)",
		executions: fmt.Sprint(a.Executions),
		answers:    formatAnswers([]map[int]int{a.Answers}),
		p50:        ms(a.Latency.P50),
		p99:        ms(a.Latency.P99),
		max:        ms(a.Latency.Max),
		conns:      connsCell(one(a.Conns.Pool), one(a.Conns.Listen)) + " (3 processes)",
		lost:       fmt.Sprint(a.Backlog.Lost()),
		dead:       fmt.Sprint(a.Backlog.DeadLetters),
		details:    details,
		result:     verdict(fails),
	}
}

func eventsCell(b backlog) string {
	return fmt.Sprintf("%d events: %d delivered, %d waiting; max attempt_count %d", b.Events, b.Delivered, b.Waiting, b.MaxAttempts)
}

func drainCell(a loadRun) string {
	if a.Drained {
		return a.Drain.Round(100 * time.Millisecond).String()
	}
	return "not drained after " + a.Drain.Round(time.Second).String()
}

func connsCell(pool, listen spread) string {
	return pool.Format(count) + " +" + listen.Format(count) + " LISTEN"
}

func latencyCells[R any](runs []R, of func(R) latencies) (p50, p99, max string) {
	p50 = spreadOfDurations(runs, func(r R) time.Duration { return of(r).P50 }).Format(duration)
	p99 = spreadOfDurations(runs, func(r R) time.Duration { return of(r).P99 }).Format(duration)
	max = spreadOfDurations(runs, func(r R) time.Duration { return of(r).Max }).Format(duration)
	return p50, p99, max
}

// appendIf adds reason once when cond holds.
func appendIf(reasons []string, cond bool, reason string) []string {
	if !cond {
		return reasons
	}
	for _, r := range reasons {
		if r == reason {
			return reasons
		}
	}
	return append(reasons, reason)
}

func verdict(fails []string) string {
	if len(fails) == 0 {
		return "pass"
	}
	return "FAIL: " + strings.Join(fails, ", ")
}

// writeTable prints the rows as a Markdown table.
func writeTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| scenario | runs | executions | answers by status | p50 | p99 | max | peak DB connections | events lost | dead letters | details | result |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|---:|---|---:|---:|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.scenario, r.runs, r.executions, r.answers, r.p50, r.p99, r.max, r.conns, r.lost, r.dead, r.details, r.result)
	}
}
