package tracing

import (
	"strings"
	"unicode"
)

// Summary is what a span says of a SQL statement: its operation and the
// table it works on, read from the statement's shape and never from its
// values.
type Summary struct {
	Operation  string // SELECT, INSERT, UPDATE, DELETE, BEGIN...; "" if not read
	Collection string // the table; "" when there is none or it was not read
}

// String is the span name: "SELECT operations", "BEGIN", or "SQL".
func (s Summary) String() string {
	switch {
	case s.Operation == "":
		return "SQL"
	case s.Collection == "":
		return s.Operation
	}
	return s.Operation + " " + s.Collection
}

// SQLSummary reads the operation and the table of the first statement of
// sql: the first keyword (for WITH, the keyword of the statement the CTEs
// feed), and the name after INTO (INSERT), UPDATE, or the first FROM
// (SELECT, DELETE), all outside parentheses, quotes and comments. Nothing
// but keywords and identifiers is ever taken: literals, which bun writes
// into the text, are skipped.
func SQLSummary(sql string) Summary {
	toks := sqlTokens(sql)
	var s Summary
	i := 0
	for i < len(toks) && (toks[i].depth > 0 || toks[i].kind != word) {
		i++
	}
	if i == len(toks) {
		return s
	}
	if strings.EqualFold(toks[i].text, "WITH") {
		// The statement the CTEs feed: the first one outside them.
		with := i
		for i++; i < len(toks) && (toks[i].depth > 0 || toks[i].kind != word || !isStatement(strings.ToUpper(toks[i].text))); i++ {
		}
		if i == len(toks) {
			return Summary{Operation: "WITH"}
		}
		// A SELECT of what a CTE wrote (WITH u AS (UPDATE ...) SELECT
		// ... FROM u: a write that checks its own rows) is named by the
		// write, which is what the statement does.
		if strings.EqualFold(toks[i].text, "SELECT") {
			for k := with + 1; k < i; k++ {
				// A CTE's first word, not FOR UPDATE's.
				if toks[k].depth == 1 && toks[k].kind == word && toks[k-1].kind == open && isWrite(strings.ToUpper(toks[k].text)) {
					i = k
					break
				}
			}
		}
	}
	s.Operation = strings.ToUpper(toks[i].text)
	after := ""
	switch s.Operation {
	case "INSERT":
		after = "INTO"
	case "SELECT", "DELETE":
		after = "FROM"
	case "UPDATE":
		if i+1 < len(toks) && toks[i+1].kind == ident {
			s.Collection = toks[i+1].text
		}
		return s
	default:
		return s
	}
	for j := i + 1; j+1 < len(toks); j++ {
		if toks[j].depth == toks[i].depth && toks[j].kind == word && strings.EqualFold(toks[j].text, after) {
			// After FROM, a name and "(" is a function, not a table.
			if next := toks[j+1]; next.kind == ident && (after == "INTO" || j+2 >= len(toks) || toks[j+2].kind != open) {
				s.Collection = next.text
			}
			break
		}
		if toks[j].kind == semicolon {
			break
		}
	}
	return s
}

func isWrite(op string) bool { return op != "SELECT" && isStatement(op) }

func isStatement(op string) bool {
	switch op {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "MERGE":
		return true
	}
	return false
}

type tokenKind int

const (
	word      tokenKind = iota // a bare word: a keyword or a name
	ident                      // a table's name: "quoted", or bare after FROM, INTO, UPDATE
	open                       // (
	semicolon                  // ;
)

type sqlToken struct {
	kind  tokenKind
	text  string
	depth int // parentheses around it
}

// sqlTokens splits sql into words, quoted names, "(" and ";", each with its
// depth in parentheses; literals ('...', numbers), placeholders, operators
// and comments are dropped. A bare word right after FROM, INTO or UPDATE
// is an identifier (ident), like a quoted name.
func sqlTokens(sql string) []sqlToken {
	var toks []sqlToken
	depth := 0
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			if n := strings.IndexByte(sql[i:], '\n'); n >= 0 {
				i += n
			} else {
				i = len(sql)
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			if n := strings.Index(sql[i+2:], "*/"); n >= 0 {
				i += n + 4
			} else {
				i = len(sql)
			}
		case c == '\'':
			// A literal, '' escaping a quote inside it: skipped whole.
			i++
			for i < len(sql) {
				if sql[i] == '\'' {
					if i+1 < len(sql) && sql[i+1] == '\'' {
						i += 2
						continue
					}
					break
				}
				i++
			}
			i++
		case c == '"':
			n := strings.IndexByte(sql[i+1:], '"')
			if n < 0 {
				return toks
			}
			toks = append(toks, sqlToken{kind: ident, text: sql[i+1 : i+1+n], depth: depth})
			i += n + 2
		case c == '(':
			toks = append(toks, sqlToken{kind: open, depth: depth})
			depth++
			i++
		case c == ')':
			depth = max(depth-1, 0)
			i++
		case c == ';':
			toks = append(toks, sqlToken{kind: semicolon, depth: depth})
			i++
		case c == '_' || unicode.IsLetter(rune(c)):
			j := i
			for j < len(sql) && (sql[j] == '_' || sql[j] == '.' || sql[j] == '$' || unicode.IsLetter(rune(sql[j])) || unicode.IsDigit(rune(sql[j]))) {
				j++
			}
			toks = append(toks, sqlToken{kind: word, text: sql[i:j], depth: depth})
			i = j
		default:
			i++ // spaces, digits, operators, placeholders
		}
	}
	// A bare word after FROM, INTO or UPDATE is an identifier as much as a
	// quoted one: mark those that are not keywords of the clause.
	for k := range toks {
		if toks[k].kind == word && k > 0 && toks[k-1].kind == word && isTablePrefix(toks[k-1].text) && !isKeyword(toks[k].text) {
			toks[k].kind = ident
		}
	}
	return toks
}

func isTablePrefix(w string) bool {
	switch strings.ToUpper(w) {
	case "FROM", "INTO", "UPDATE":
		return true
	}
	return false
}

func isKeyword(w string) bool {
	switch strings.ToUpper(w) {
	case "ONLY", "LATERAL", "SELECT", "SET", "WHERE", "VALUES", "DEFAULT":
		return true
	}
	return false
}
