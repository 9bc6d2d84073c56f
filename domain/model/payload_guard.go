package model

import (
	"bytes"
	"io"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/oncehq/once/domain"
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
	// One pass over the tokens: no value tree is built (decoding into
	// map[string]any was most of the guard's cost on every stored
	// response). Duplicate names and invalid UTF-8 pass the tokenizer, as
	// they passed encoding/json, and are checked like any other text.
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return domain.Wrap(domain.CodeUnsafePayload, err, "payload is not JSON")
		}
		depth := dec.StackDepth()
		if tok.Kind() == '"' {
			kind, n := dec.StackIndex(depth)
			isName := kind == '{' && n%2 == 1
			if text := tok.String(); (isName && secretName(text)) || (!isName && secretString(text)) {
				return domain.Errorf(domain.CodeUnsafePayload, "payload field %s looks like a secret", secretPath(dec))
			}
		}
		if depth == 0 {
			// One value and nothing after it, as encoding/json wants.
			if _, err := dec.ReadToken(); err != io.EOF {
				return domain.Errorf(domain.CodeUnsafePayload, "payload is not JSON: more than one value")
			}
			return nil
		}
	}
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
		`(^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.)|(^whsec_)|(^once_sk_[0-9a-z]{12}_)`)

// secretString reports a string value that looks like a secret.
func secretString(s string) bool {
	return mayMatchSecretValue(s) && secretValue.MatchString(strings.TrimSpace(s))
}

// secretPath names where the decoder stands as $.name[].name (array
// positions are not part of it), the name just read included.
func secretPath(dec *jsontext.Decoder) string {
	var b strings.Builder
	b.WriteString("$")
	ptr := dec.StackPointer()
	level := 1
	for tok := range ptr.Tokens() {
		if kind, _ := dec.StackIndex(level); kind == '[' {
			b.WriteString("[]")
		} else {
			b.WriteString("." + tok)
		}
		level++
	}
	return b.String()
}

// mayMatchSecretValue is a cheap filter in front of secretValue, which
// every string value of every payload went through: an ASCII string can
// only match it if it starts (after spaces) with bearer, basic, eyJ, whsec_ or once_sk_ in
// any case, or holds "-----" or "=". Ids, times, names and types mostly do
// neither. Anything not ASCII goes to the regexp (case folding there knows
// more than a byte comparison: ſ matches s).
func mayMatchSecretValue(s string) bool {
	s = strings.TrimSpace(s)
	return hasPrefixFold(s, "bearer") || hasPrefixFold(s, "basic") || hasPrefixFold(s, "eyj") || hasPrefixFold(s, "whsec_") || hasPrefixFold(s, "once_sk_") ||
		strings.Contains(s, "-----") || strings.IndexByte(s, '=') >= 0 || !isASCII(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// nameNormalizer drops what secretNames and secretFragments ignore. A
// Replacer is safe for concurrent use; building one per field name was a
// tenth of the CPU of an idempotent write.
var nameNormalizer = strings.NewReplacer("_", "", "-", "", " ", "")

// SecretLikeName says whether a JSON field name reads like one that holds a
// secret (a credential, cookie, token, signature or signed URL). It judges
// names a program chose (a payload's or a response type's fields), not
// text a tenant wrote.
func SecretLikeName(name string) bool { return secretName(name) }

func secretName(name string) bool {
	n := strings.ToLower(nameNormalizer.Replace(name))
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
