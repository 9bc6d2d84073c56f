// Package opskit checks the operations kit shipped in deploy/ (the
// Prometheus rules, the Grafana dashboard) against what once's processes
// really export: every metric a rule or a panel names, and every label in
// its matchers and its by/without/on/ignoring clauses, must be one that a
// scrape of serve, dispatch or work shows (or one the kit defines itself:
// a recording rule, a postgres_exporter query). A rule that names a
// metric nobody exports never fires, silently; this is what catches it.
//
// PromQL is read by a small lexer, not Prometheus's parser (a heavy
// dependency for a list of names): it knows strings, comments, range
// brackets, Grafana's $variables, functions, aggregations and keywords,
// and takes every other identifier for a metric name.
package opskit

import (
	"fmt"
	"strings"
	"unicode"
)

// Selector is one series selector of an expression: its metric name ("" for
// a bare {…} selector) and the label names its matchers test.
type Selector struct {
	Metric string
	Labels []string
}

// Refs are the names an expression uses.
type Refs struct {
	Selectors []Selector
	// Grouping are the label names of its by, without, on, ignoring,
	// group_left and group_right clauses.
	Grouping []string
}

// words that are never metric names: PromQL's keywords, binary operators
// written as words, aggregations (which may be followed by by/without
// before their parenthesis) and the number literals.
var words = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"start": true, "end": true, "inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// groupers take a list of label names in parentheses.
var groupers = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// Parse lists the metric names and label names expr uses.
func Parse(expr string) (Refs, error) {
	l := &lexer{s: expr}
	var refs Refs
	for {
		l.space()
		if l.done() {
			return refs, nil
		}
		c := l.peek()
		switch {
		case c == '#':
			l.line()
		case c == '"' || c == '\'' || c == '`':
			if _, err := l.str(); err != nil {
				return refs, err
			}
		case c == '[':
			if err := l.until(']'); err != nil {
				return refs, err
			}
		case c == '$':
			l.variable()
		case c == '{':
			sel, err := l.matchers("")
			if err != nil {
				return refs, err
			}
			refs.Selectors = append(refs.Selectors, sel)
		case unicode.IsDigit(c) || (c == '.' && unicode.IsDigit(l.at(1))):
			l.number()
		case isIdentStart(c):
			name := l.ident()
			l.space()
			next := l.peek()
			switch {
			case groupers[name]:
				if next == '(' {
					labels, err := l.labelList()
					if err != nil {
						return refs, err
					}
					refs.Grouping = append(refs.Grouping, labels...)
				}
			case words[strings.ToLower(name)] || next == '(':
				// a keyword, an aggregation or a function
			case next == '{':
				sel, err := l.matchers(name)
				if err != nil {
					return refs, err
				}
				refs.Selectors = append(refs.Selectors, sel)
			default:
				refs.Selectors = append(refs.Selectors, Selector{Metric: name})
			}
		default:
			l.i++ // an operator, a parenthesis, a comma
		}
	}
}

// Metrics are the metric names of refs, each once, in order.
func (r Refs) Metrics() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range r.Selectors {
		if s.Metric != "" && !seen[s.Metric] {
			seen[s.Metric] = true
			out = append(out, s.Metric)
		}
	}
	return out
}

type lexer struct {
	s string
	i int
}

func (l *lexer) done() bool { return l.i >= len(l.s) }

func (l *lexer) at(n int) rune {
	if l.i+n >= len(l.s) {
		return 0
	}
	return rune(l.s[l.i+n])
}

func (l *lexer) peek() rune { return l.at(0) }

func (l *lexer) space() {
	for !l.done() && unicode.IsSpace(l.peek()) {
		l.i++
	}
}

func (l *lexer) line() {
	for !l.done() && l.peek() != '\n' {
		l.i++
	}
}

func isIdentStart(c rune) bool { return c == '_' || c == ':' || unicode.IsLetter(c) }

func isIdent(c rune) bool { return isIdentStart(c) || unicode.IsDigit(c) }

func (l *lexer) ident() string {
	start := l.i
	for !l.done() && isIdent(l.peek()) {
		l.i++
	}
	return l.s[start:l.i]
}

// number skips a number or a duration (5m, 1h30m, 1e3, 0x1f).
func (l *lexer) number() {
	for !l.done() && (isIdent(l.peek()) || l.peek() == '.') {
		l.i++
	}
}

// str reads a quoted string and returns its content.
func (l *lexer) str() (string, error) {
	quote := l.peek()
	start := l.i
	l.i++
	var b strings.Builder
	for !l.done() {
		c := l.peek()
		switch {
		case c == quote:
			l.i++
			return b.String(), nil
		case c == '\\' && quote != '`':
			l.i += 2
			if l.i <= len(l.s) {
				b.WriteByte(l.s[l.i-1])
			}
		default:
			b.WriteRune(c)
			l.i++
		}
	}
	return "", fmt.Errorf("unterminated string at %d: %s", start, l.s[start:])
}

// until skips to just past the next end (a range or subquery's brackets).
func (l *lexer) until(end byte) error {
	start := l.i
	j := strings.IndexByte(l.s[l.i:], end)
	if j < 0 {
		return fmt.Errorf("no %q after %d: %s", end, start, l.s[start:])
	}
	l.i += j + 1
	return nil
}

// variable skips a Grafana variable: $name, ${name} or ${name:format}.
func (l *lexer) variable() {
	l.i++
	if l.peek() == '{' {
		_ = l.until('}')
		return
	}
	l.ident()
}

// matchers reads {label op "value", …} after metric ("" for none); a
// __name__="x" matcher names the metric.
func (l *lexer) matchers(metric string) (Selector, error) {
	sel := Selector{Metric: metric}
	l.i++ // {
	for {
		l.space()
		switch c := l.peek(); {
		case l.done():
			return sel, fmt.Errorf("unterminated matchers: %s", l.s)
		case c == '}':
			l.i++
			return sel, nil
		case c == ',':
			l.i++
			continue
		}
		var label string
		var err error
		if c := l.peek(); c == '"' || c == '\'' {
			label, err = l.str()
		} else {
			label = l.ident()
		}
		if err != nil {
			return sel, err
		}
		if label == "" {
			return sel, fmt.Errorf("a label name expected at %d: %s", l.i, l.s)
		}
		l.space()
		op := l.i
		for !l.done() && strings.ContainsRune("=!~", l.peek()) {
			l.i++
		}
		if op == l.i { // a bare name: a metric named inside the braces
			if sel.Metric == "" {
				sel.Metric = label
			}
			continue
		}
		equal := l.s[op:l.i] == "="
		l.space()
		value, err := l.str()
		if err != nil {
			return sel, err
		}
		if label == "__name__" {
			if equal && sel.Metric == "" {
				sel.Metric = value
			}
			continue
		}
		sel.Labels = append(sel.Labels, label)
	}
}

// labelList reads (a, b, …).
func (l *lexer) labelList() ([]string, error) {
	start := l.i
	if err := l.until(')'); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range strings.Split(l.s[start+1:l.i-1], ",") {
		f = strings.Trim(strings.TrimSpace(f), `"`)
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}
