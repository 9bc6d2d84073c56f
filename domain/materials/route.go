package materials

import (
	"net"
	"net/url"
	"strings"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
)

// TransferRoute is where a transfer's downloads go: the host of its first
// source URL, lowercased, with its port unless it is the scheme's default,
// whose server the worker paces and breaks apart from every other. A
// transfer's job is one destination, so one naming several hosts is
// routed by its first; transfers need no order between them.
func TransferRoute(source *url.URL) jobs.Route {
	host := strings.ToLower(source.Hostname())
	if port := source.Port(); port != "" && port != defaultPorts[strings.ToLower(source.Scheme)] {
		host = net.JoinHostPort(host, port)
	}
	return jobs.Route{Destination: model.Destination{System: "material", Account: host}}
}

var defaultPorts = map[string]string{"http": "80", "https": "443"}
