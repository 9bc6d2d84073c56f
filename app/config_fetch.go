package app

import "github.com/oncehq/once/domain/fetchpolicy"

// FetchConfig is the allow-lists of the fetch policy (domain/fetchpolicy)
// that open private ranges and hosts to material transfers, for tests and
// private deployments.
type FetchConfig struct {
	FetchAllowCIDRs string `env:"ONCE_FETCH_ALLOW_CIDRS"`
	FetchAllowHosts string `env:"ONCE_FETCH_ALLOW_HOSTS"`
}

func (c FetchConfig) fetchPolicy() (fetchpolicy.Policy, error) {
	return fetchpolicy.Parse(c.FetchAllowCIDRs, c.FetchAllowHosts)
}

// Validate parses the allow-lists.
func (c FetchConfig) Validate() error {
	_, err := c.fetchPolicy()
	return invalidIf(err != nil, "ONCE_FETCH_ALLOW_CIDRS / ONCE_FETCH_ALLOW_HOSTS: %w", err)
}

func (FetchConfig) settings() settingGroup { return fetchSettings }

var fetchSettings = settingGroup{
	title: "Material fetches and webhook deliveries",
	vars: map[string]setting{
		"ONCE_FETCH_ALLOW_CIDRS": {
			help: "address ranges material transfers may fetch from and webhook endpoints may point to although not public (10.0.0.0/8,...); empty: public addresses only",
			doc:  "comma-separated ranges (`10.0.0.0/8`, `fd00::/8`) or addresses that material sources and webhook endpoints may point to although they are not public (`127.0.0.0/8` for a receiver on the same machine)",
		},
		"ONCE_FETCH_ALLOW_HOSTS": {
			help: "host names material transfers may fetch from and webhooks may be delivered to, whatever they resolve to (minio.internal,*.corp.example)",
			doc:  "comma-separated host names (`minio.internal`, or `*.corp.example` for the names under it) that may be fetched from, or delivered to, whatever they resolve to",
		},
	},
}
