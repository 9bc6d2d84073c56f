package model

import "strings"

// Destination is where a job's external call goes: a system (a platform
// such as "shopify", or "ai", or "material") and, within it, the account
// whose quota the call spends (a shop, a provider, a host). Workers pace,
// throttle and break calls per destination, with defaults per system.
type Destination struct {
	System  string
	Account string
}

// String is "system/account" (or "system" alone), the form messages and
// metrics carry.
func (d Destination) String() string {
	if d.Account == "" {
		return d.System
	}
	return d.System + "/" + d.Account
}

// IsZero reports whether d names nothing.
func (d Destination) IsZero() bool { return d.System == "" }

// ParseDestination reads String's form back; "" is the zero Destination.
func ParseDestination(s string) Destination {
	system, account, _ := strings.Cut(s, "/")
	return Destination{System: system, Account: account}
}
