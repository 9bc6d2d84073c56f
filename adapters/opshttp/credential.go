package opshttp

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// SessionCookie is the operator console's session cookie.
const SessionCookie = "once_console"

// Credential is the operator token (ONCE_OPERATOR_TOKEN, distinct from any
// tenant token) and the console's sessions signed with it.
//
// A session is "name.expiry.mac": the operator's name (for the audit log),
// when it ends, and an HMAC of both keyed by a key derived from the token.
// Nothing is kept server-side, so any process holding the same token
// accepts it, and changing the token ends every session.
type Credential struct {
	token []byte
	key   []byte
}

// NewCredential is the credential of token; nil when token is empty (no
// operator: the operator's routes are off).
func NewCredential(token string) *Credential {
	if token == "" {
		return nil
	}
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("once operator console session"))
	return &Credential{token: []byte(token), key: mac.Sum(nil)}
}

// Matches compares a presented token in constant time.
func (c *Credential) Matches(presented string) bool {
	return c != nil && subtle.ConstantTimeCompare([]byte(presented), c.token) == 1
}

func (c *Credential) sign(payload string) string {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Session makes the cookie value for name, valid until `until`.
func (c *Credential) Session(name string, until time.Time) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(name)) + "." + strconv.FormatInt(until.Unix(), 10)
	return payload + "." + c.sign(payload)
}

// SessionOperator returns the name in a valid, unexpired session value.
func (c *Credential) SessionOperator(value string, now time.Time) (string, bool) {
	if c == nil {
		return "", false
	}
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return "", false
	}
	payload, mac := value[:i], value[i+1:]
	if !hmac.Equal([]byte(mac), []byte(c.sign(payload))) {
		return "", false
	}
	encoded, expiry, ok := strings.Cut(payload, ".")
	if !ok {
		return "", false
	}
	until, err := strconv.ParseInt(expiry, 10, 64)
	if err != nil || now.Unix() >= until {
		return "", false
	}
	name, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return "", false
	}
	return string(name), true
}
