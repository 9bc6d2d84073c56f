package opsconsole

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// cookieName is the session cookie of the page.
const cookieName = "once_console"

// sessionTTL is how long a login lasts.
const sessionTTL = 12 * time.Hour

// credential checks the operator token and signs the page's sessions.
//
// A session is "name.expiry.mac": the operator's name (for the audit log),
// when it ends, and an HMAC of both keyed by a key derived from the token.
// Nothing is kept server-side, so any process holding the same token
// accepts it, and changing the token ends every session.
type credential struct {
	token []byte
	key   []byte
}

func newCredential(token string) credential {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("once operator console session"))
	return credential{token: []byte(token), key: mac.Sum(nil)}
}

// matches compares a presented token in constant time.
func (c credential) matches(presented string) bool {
	return subtle.ConstantTimeCompare([]byte(presented), c.token) == 1
}

func (c credential) sign(payload string) string {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// session makes the cookie value for name, valid until `until`.
func (c credential) session(name string, until time.Time) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(name)) + "." + strconv.FormatInt(until.Unix(), 10)
	return payload + "." + c.sign(payload)
}

// operator returns the name in a valid, unexpired session value.
func (c credential) operator(value string, now time.Time) (string, bool) {
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

// operatorName makes a name typed by an operator fit for a log line:
// printable, trimmed, at most 64 runes.
func operatorName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(s))
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return s
}

// sameOrigin tells whether a browser request comes from the console's own
// origin: an Origin header, when there is one, must name this host. With
// the SameSite=Strict cookie and the JSON content type the API requires,
// it keeps another site from making an operator's browser act.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return origin == scheme+"://"+r.Host
}
