package app

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ConfigVar is one environment variable of Config: its name, its default
// (the value of DefaultConfig, which parsing starts from, so help cannot
// disagree with what is parsed), and a line of help.
type ConfigVar struct {
	Name    string
	Default string
	Help    string
	// Secret values are masked by `once config`.
	Secret bool
}

// ConfigVars lists Config's variables, group by group in the struct's
// order.
func ConfigVars() []ConfigVar {
	var vars []ConfigVar
	for _, g := range declaredGroups(DefaultConfig()) {
		for _, v := range g.vars {
			vars = append(vars, ConfigVar{Name: v.name, Default: formatValue(v.value), Help: v.help, Secret: secretName.MatchString(v.name)})
		}
	}
	return vars
}

// secretName matches the variables whose values are secrets, by name, so
// that a new one is masked without anyone remembering to; and
// ONCE_OPERATORS, whose tokens' hashes are no one's business either (its
// names stay shown).
var secretName = regexp.MustCompile(`SECRET|PASSWORD|_TOKEN$|_KEYS?$|^ONCE_OPERATORS$`)

// ConfigValue is a variable's effective value, masked when secret, and
// where it came from.
type ConfigValue struct {
	Name, Value string
	// Source is "environment", "default" (the struct's), or "dev default"
	// (the public secrets of the embedded store).
	Source string
}

// Effective lists c's values with their sources, masked: secrets entirely
// (a list of id:key pairs keeps its ids), and the password of any URL or
// connection string. lookup is os.LookupEnv, or a test's.
func (c Config) Effective(lookup func(string) (string, bool)) []ConfigValue {
	vars := ConfigVars()
	values := make([]ConfigValue, 0, len(vars))
	i := 0
	for _, g := range declaredGroups(c) {
		for _, dv := range g.vars {
			v := vars[i]
			i++
			value := fmt.Sprint(dv.value.Interface())
			source := "default"
			if _, set := lookup(v.Name); set {
				source = "environment"
			} else if v.Default == "" && value != "" {
				source = "dev default"
			}
			if v.Secret {
				value = maskSecret(value)
			} else {
				value = maskPasswords(value)
			}
			values = append(values, ConfigValue{Name: v.Name, Value: value, Source: source})
		}
	}
	return values
}

const mask = "********"

// maskSecret hides a secret; of a list of id:key pairs
// (ONCE_IDEMPOTENCY_SECRETS, ONCE_CREDENTIAL_KEYS) it keeps the ids, which
// say which keys are configured.
func maskSecret(s string) string {
	if s == "" {
		return ""
	}
	items := strings.Split(s, ",")
	for i, item := range items {
		id, _, pair := strings.Cut(item, ":")
		if !pair {
			return mask
		}
		items[i] = id + ":" + mask
	}
	return strings.Join(items, ",")
}

// dsnPassword is the password of a keyword/value connection string
// ("host=db password=s3cret") or of a URL's query (?password=s3cret).
var dsnPassword = regexp.MustCompile(`(?i)(\bpassword=)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// maskPasswords hides the passwords a URL or connection string carries.
func maskPasswords(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), mask)
			s = strings.Replace(u.String(), url.PathEscape(mask), mask, 1)
		}
	}
	return dsnPassword.ReplaceAllString(s, "${1}"+mask)
}
