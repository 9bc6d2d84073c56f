package opshttp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// LegacyOperator is the name of the one operator ONCE_OPERATOR_TOKEN
// makes: a shared token names no one, so the audit log says so.
const LegacyOperator = "operator"

// MinTokenLen is the shortest operator token accepted: tokens are random
// (`once operator new`), so one unsalted SHA-256 is a safe way to keep
// them, and with 32 bytes guessing one is out of reach.
const MinTokenLen = 32

// TokenHash is what the configuration keeps of an operator's token: its
// SHA-256.
type TokenHash [sha256.Size]byte

// HashToken is the hash of token.
func HashToken(token string) TokenHash { return sha256.Sum256([]byte(token)) }

func (h TokenHash) String() string { return hex.EncodeToString(h[:]) }

// Entry is an operator's line of ONCE_OPERATORS: "name:hash".
func Entry(name, token string) string { return name + ":" + HashToken(token).String() }

var operatorName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// ValidName says whether name may name an operator: 1 to 64 letters,
// digits, '.', '_', '@' or '-', starting with a letter or digit (it goes
// into log lines and URLs as it is).
func ValidName(name string) bool { return operatorName.MatchString(name) }

// Operators are who may use the operator routes of the ops listener, each
// with a token of their own: the token presented names its operator (in
// the audit log, on the session), never a name the caller types. Only the
// tokens' hashes are kept.
type Operators struct {
	byHash map[TokenHash]string
	byName map[string]TokenHash
}

// NewOperators is no operator: the operator routes are off.
func NewOperators() *Operators {
	return &Operators{byHash: map[TokenHash]string{}, byName: map[string]TokenHash{}}
}

// Empty says there is no operator.
func (o *Operators) Empty() bool { return o == nil || len(o.byName) == 0 }

// Names are the operators' names, in no order.
func (o *Operators) Names() []string {
	names := make([]string, 0, len(o.byName))
	for n := range o.byName {
		names = append(names, n)
	}
	return names
}

// Add makes name an operator whose token hashes to hash.
func (o *Operators) Add(name string, hash TokenHash) error {
	if !ValidName(name) {
		return fmt.Errorf("operator name %q: 1 to 64 letters, digits, '.', '_', '@' or '-'", name)
	}
	if _, dup := o.byName[name]; dup {
		return fmt.Errorf("operator %q is named twice", name)
	}
	if other, dup := o.byHash[hash]; dup {
		return fmt.Errorf("operators %q and %q have the same token: each needs one of their own", other, name)
	}
	o.byName[name], o.byHash[hash] = hash, name
	return nil
}

// AddEntries adds the operators of entries: "name:hash" (hash the token's
// SHA-256 in hex, `once operator hash`), separated by commas or lines;
// blank lines and lines starting with '#' are skipped (a file of them).
func (o *Operators) AddEntries(entries string) error {
	for line := range strings.FieldsFuncSeq(entries, func(r rune) bool { return r == ',' || r == '\n' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hexHash, ok := strings.Cut(line, ":")
		raw, err := hex.DecodeString(strings.TrimSpace(hexHash))
		if !ok || err != nil || len(raw) != sha256.Size {
			return fmt.Errorf("%q is not name:hash (the token's SHA-256 in hex, as `once operator hash NAME` prints it)", redactEntry(line))
		}
		if err := o.Add(strings.TrimSpace(name), TokenHash(raw)); err != nil {
			return err
		}
	}
	return nil
}

// redactEntry keeps an entry's name only, for an error: a token pasted by
// mistake where its hash belongs must not reach the logs.
func redactEntry(line string) string {
	name, _, _ := strings.Cut(line, ":")
	return name + ":…"
}

// AddLegacyToken adds the shared ONCE_OPERATOR_TOKEN as LegacyOperator.
func (o *Operators) AddLegacyToken(token string) error {
	if len(token) < MinTokenLen {
		return fmt.Errorf("the operator token must be at least %d bytes", MinTokenLen)
	}
	if _, taken := o.byName[LegacyOperator]; taken {
		return fmt.Errorf("an operator is already named %q, the name of the shared token: rename them, or drop the shared token", LegacyOperator)
	}
	return o.Add(LegacyOperator, HashToken(token))
}

// Identify is the operator whose token presented is. The look-up is by
// the token's hash: timing tells nothing of a token, only of its hash.
func (o *Operators) Identify(presented string) (string, bool) {
	if o.Empty() || presented == "" {
		return "", false
	}
	name, ok := o.byHash[HashToken(presented)]
	return name, ok
}

// fingerprint stands for name's credential on its sessions: a session
// made with a token since replaced, or by an operator since removed, has
// none that matches.
func (o *Operators) fingerprint(name string) (string, bool) {
	hash, ok := o.byName[name]
	if !ok {
		return "", false
	}
	sum := sha256.Sum256(append([]byte("once operator session credential\x00"), hash[:]...))
	return hex.EncodeToString(sum[:16]), true
}
