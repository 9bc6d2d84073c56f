package domain

import (
	"encoding/json"
	"regexp"
	"strings"
)

// CheckPayloadSafe rejects JSON that looks like it carries a secret: a field
// named like a credential, cookie, token or signed URL, or a string value that
// looks like a bearer token, a JWT, a PEM key or a pre-signed URL. It guards
// outbox payloads, stored idempotent responses and operation errors, which
// all outlive the request and are read by people and other systems.
//
// It is a net under the typed payloads, not a replacement for them: payload
// types carry ids and versions only.
func CheckPayloadSafe(raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return Wrap(CodeUnsafePayload, err, "payload is not JSON")
	}
	if path, ok := findSecret(v, "$"); ok {
		return Errorf(CodeUnsafePayload, "payload field %s looks like a secret", path)
	}
	return nil
}

// secretNames are normalized field names (lower case, no '_' or '-') that
// must never appear. "credentialversion" stays allowed: a version is not a
// secret.
var secretNames = map[string]bool{
	"token": true, "credential": true, "credentials": true, "signature": true,
	"password": true, "passwd": true, "pwd": true, "secret": true, "cookie": true,
	"cookies": true, "authorization": true, "auth": true, "apikey": true,
}

// secretFragments disqualify a normalized field name wherever they appear.
var secretFragments = []string{
	"secret", "password", "passwd", "apikey", "accesskey", "privatekey",
	"cookie", "authorization", "bearer", "presigned", "signedurl",
	"accesstoken", "refreshtoken", "sessiontoken", "idtoken", "clientsecret",
}

var secretValue = regexp.MustCompile(
	`(?i)(^bearer\s)|(^basic\s)|(-----BEGIN [A-Z ]*PRIVATE KEY-----)|` +
		`(x-amz-signature=)|(x-goog-signature=)|([?&]signature=)|([?&]sig=)|` +
		`(^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.)`)

func findSecret(v any, path string) (string, bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			p := path + "." + k
			if secretName(k) {
				return p, true
			}
			if found, ok := findSecret(child, p); ok {
				return found, true
			}
		}
	case []any:
		for _, child := range t {
			if found, ok := findSecret(child, path+"[]"); ok {
				return found, true
			}
		}
	case string:
		if secretValue.MatchString(strings.TrimSpace(t)) {
			return path, true
		}
	}
	return "", false
}

func secretName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(name))
	if secretNames[n] {
		return true
	}
	for _, f := range secretFragments {
		if strings.Contains(n, f) {
			return true
		}
	}
	return false
}
