package limits

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// Policy is the rate of each workspace: Default, unless Workspaces names
// the workspace.
type Policy struct {
	Default    model.Rate
	Workspaces map[uuid.UUID]model.Rate
}

// For is workspace's rate (unlimited when off).
func (p Policy) For(workspace uuid.UUID) model.Rate {
	if r, ok := p.Workspaces[workspace]; ok {
		return r
	}
	return p.Default
}

// ParseRate reads a rate as the configuration writes it:
//
//	REQUESTS/UNIT[:BURST]   100/s, 6000/m:500, 20/s:1
//	off                     no limit
//
// UNIT is s, m or h (whole seconds: the RateLimit-Policy header's window
// is in seconds). BURST, the requests allowed at once after a quiet spell,
// defaults to REQUESTS.
func ParseRate(s string) (model.Rate, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return model.Rate{}, nil
	}
	spec, burstText, hasBurst := strings.Cut(s, ":")
	count, unit, ok := strings.Cut(spec, "/")
	if !ok {
		return model.Rate{}, fmt.Errorf("rate %q: want REQUESTS/UNIT[:BURST] (such as 100/s:200) or off", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n < 1 {
		return model.Rate{}, fmt.Errorf("rate %q: the number of requests must be a positive integer", s)
	}
	per, ok := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[strings.TrimSpace(unit)]
	if !ok {
		return model.Rate{}, fmt.Errorf("rate %q: the unit must be s, m or h", s)
	}
	burst := n
	if hasBurst {
		if burst, err = strconv.Atoi(strings.TrimSpace(burstText)); err != nil || burst < 1 {
			return model.Rate{}, fmt.Errorf("rate %q: the burst must be a positive integer", s)
		}
	}
	return model.Rate{Requests: n, Per: per, Burst: burst}, nil
}

// ParsePolicy reads the default rate (ParseRate) and the per-workspace
// overrides, a comma-separated list of WORKSPACE_ID=RATE:
//
//	3f0c…=500/s:1000,8a1d…=off
func ParsePolicy(defaultRate, workspaces string) (Policy, error) {
	d, err := ParseRate(defaultRate)
	if err != nil {
		return Policy{}, err
	}
	p := Policy{Default: d, Workspaces: map[uuid.UUID]model.Rate{}}
	for _, item := range strings.Split(workspaces, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, rate, ok := strings.Cut(item, "=")
		if !ok {
			return Policy{}, fmt.Errorf("%q: want WORKSPACE_ID=RATE", item)
		}
		ws, err := uuid.Parse(strings.TrimSpace(id))
		if err != nil || ws == uuid.Nil {
			return Policy{}, fmt.Errorf("%q: %q is not a workspace id", item, id)
		}
		if _, dup := p.Workspaces[ws]; dup {
			return Policy{}, fmt.Errorf("workspace %s is listed twice", ws)
		}
		if p.Workspaces[ws], err = ParseRate(rate); err != nil {
			return Policy{}, fmt.Errorf("workspace %s: %w", ws, err)
		}
	}
	return p, nil
}
