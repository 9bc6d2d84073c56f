package destinations

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// encode is s as the store keeps it: sharedWire's JSON, byte for byte
// what json.Marshal writes of s.wire() (TestEncodeIsTheWire), written by
// hand because a job writes its destination's record twice (its lease
// taken, then given back with the outcome), and encoding/json's
// reflection was most of the gate's own time per job.
func (s shared) encode() []byte {
	p, b := s.pace, s.breaker
	w := wireWriter{out: make([]byte, 0, 256)}
	w.out = append(w.out, '{')
	w.boolean("unpaced", p.unpaced)
	w.float("ceiling", p.ceiling)
	w.float("met", p.met)
	w.boolean("starting", p.starting)
	w.float("rate", p.rate)
	w.float("burst", p.burst)
	w.float("tokens", p.tokens)
	w.time("filled_at", p.filledAt, false)
	w.time("blocked_until", p.blockedUntil, true)
	w.integer("blocked_for", int64(p.blockedFor))
	w.unsigned("grants", p.grants)
	w.unsigned("slowed_at", p.slowedAt)
	w.time("slowed_time", p.slowedTime, true)
	w.integer("failures", int64(b.failures))
	w.boolean("open", b.open)
	w.time("open_until", b.openUntil, true)
	w.integer("cooldown", int64(b.cooldown))
	w.text("probe_by", b.probeBy)
	w.time("probe_until", b.probeUntil, true)
	w.list("accounts", len(s.accounts), func(i int) { w.out = appendJSONString(w.out, s.accounts[i]) })
	w.boolean("paused", s.paused)
	w.time("paused_until", s.pausedUntil, true)
	w.list("calls", len(s.calls), func(i int) {
		w.out = append(w.out, `{"name":`...)
		w.out = appendJSONString(w.out, s.calls[i].name)
		w.out = append(w.out, `,"until":`...)
		w.out = appendJSONTime(w.out, s.calls[i].until)
		w.out = append(w.out, '}')
	})
	return append(w.out, '}')
}

// wireWriter writes a JSON object's members as encoding/json does for
// sharedWire's tags: omitempty leaves out false, 0 and "", omitzero a
// zero time.
type wireWriter struct {
	out     []byte
	members int
}

func (w *wireWriter) key(name string) {
	if w.members > 0 {
		w.out = append(w.out, ',')
	}
	w.members++
	w.out = append(w.out, '"')
	w.out = append(w.out, name...)
	w.out = append(w.out, '"', ':')
}

// list writes n elements (none: nothing, as omitempty), each by element.
func (w *wireWriter) list(name string, n int, element func(i int)) {
	if n == 0 {
		return
	}
	w.key(name)
	w.out = append(w.out, '[')
	for i := range n {
		if i > 0 {
			w.out = append(w.out, ',')
		}
		element(i)
	}
	w.out = append(w.out, ']')
}

func (w *wireWriter) boolean(name string, v bool) {
	if v {
		w.key(name)
		w.out = append(w.out, "true"...)
	}
}

func (w *wireWriter) integer(name string, v int64) {
	if v != 0 {
		w.key(name)
		w.out = strconv.AppendInt(w.out, v, 10)
	}
}

func (w *wireWriter) unsigned(name string, v uint64) {
	if v != 0 {
		w.key(name)
		w.out = strconv.AppendUint(w.out, v, 10)
	}
}

// float writes v as encoding/json does: the shortest decimal that reads
// back as v, in exponent form only below 1e-6 or from 1e21, its
// exponent's leading zero dropped.
func (w *wireWriter) float(name string, v float64) {
	if v == 0 {
		return
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		panic("destinations: a record's number is not finite: " + strconv.FormatFloat(v, 'g', -1, 64))
	}
	w.key(name)
	format := byte('f')
	if abs := math.Abs(v); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	w.out = strconv.AppendFloat(w.out, v, format, -1, 64)
	if n := len(w.out); format == 'e' && n >= 4 && w.out[n-4] == 'e' && w.out[n-3] == '-' && w.out[n-2] == '0' {
		w.out[n-2] = w.out[n-1]
		w.out = w.out[:n-1]
	}
}

func (w *wireWriter) text(name, v string) {
	if v != "" {
		w.key(name)
		w.out = appendJSONString(w.out, v)
	}
}

func (w *wireWriter) time(name string, v time.Time, omitZero bool) {
	if omitZero && v.IsZero() {
		return
	}
	w.key(name)
	w.out = appendJSONTime(w.out, v)
}

// appendJSONTime appends t as time.Time.MarshalJSON writes it.
func appendJSONTime(out []byte, t time.Time) []byte {
	out = append(out, '"')
	out, err := t.AppendText(out)
	if err != nil {
		panic(err) // a year outside 0-9999: json.Marshal refused it too
	}
	return append(out, '"')
}

// appendJSONString appends v as encoding/json writes a string: a plain
// one (printable ASCII, nothing it escapes) as it is, any other through
// encoding/json itself.
func appendJSONString(out []byte, v string) []byte {
	for i := range len(v) {
		if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, err := json.Marshal(v)
			if err != nil {
				panic(err) // a string always encodes
			}
			return append(out, quoted...)
		}
	}
	out = append(out, '"')
	out = append(out, v...)
	return append(out, '"')
}
