package opskit

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const (
	rulesTestFile = "../prometheus/once-rules.test.yaml"
	operatingDoc  = "../../docs/operating.md"
	runbookPrefix = "https://github.com/oncehq/once/blob/main/docs/operating.md#"
)

type alertRule struct {
	Alert       string            `yaml:"alert"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func alertRules(t *testing.T) []alertRule {
	t.Helper()
	raw, err := os.ReadFile(rulesFile)
	require.NoError(t, err)
	var file struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &file))
	var out []alertRule
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// Every alert says how bad it is, what happened, and where its runbook
// is: a heading of docs/operating.md.
func TestEveryAlertHasASeverityASummaryAndARunbook(t *testing.T) {
	doc, err := os.ReadFile(operatingDoc)
	require.NoError(t, err)
	anchors := headingAnchors(string(doc))
	for _, r := range alertRules(t) {
		assert.Contains(t, []string{"critical", "warning", "info"}, r.Labels["severity"], r.Alert)
		assert.NotEmpty(t, r.Annotations["summary"], r.Alert)
		url := r.Annotations["runbook_url"]
		require.True(t, strings.HasPrefix(url, runbookPrefix), "%s: runbook_url %q", r.Alert, url)
		anchor := strings.TrimPrefix(url, runbookPrefix)
		assert.True(t, anchors[anchor], "%s: docs/operating.md has no heading #%s", r.Alert, anchor)
		assert.Equal(t, strings.ToLower(r.Alert), anchor, "%s: its runbook is the heading named after it", r.Alert)
	}
}

// Every alert has a test where it fires and one where it must not
// (promtool runs them: make ops-rules).
func TestEveryAlertIsTestedFiringAndQuiet(t *testing.T) {
	raw, err := os.ReadFile(rulesTestFile)
	require.NoError(t, err)
	var file struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &file))
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range file.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for _, r := range alertRules(t) {
		assert.True(t, fires[r.Alert], "no test where %s fires", r.Alert)
		assert.True(t, quiet[r.Alert], "no test where %s stays quiet", r.Alert)
	}
}

var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// page: lower case, spaces to hyphens, other punctuation dropped.
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		m := heading.FindStringSubmatch(line)
		if inCode || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// The dashboard is one Grafana can provision: unique panel ids, each
// panel on the datasource variable with at least one query, a row for
// each part of the service.
func TestTheDashboardIsWellFormed(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	type panel struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var dash struct {
		UID        string  `json:"uid"`
		Title      string  `json:"title"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	assert.NotEmpty(t, dash.UID)
	require.Len(t, dash.Templating.List, 1)
	assert.Equal(t, "datasource", dash.Templating.List[0].Name)
	ids := map[int]bool{}
	var rows []string
	for _, p := range dash.Panels {
		assert.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		if p.Type == "row" {
			rows = append(rows, p.Title)
			continue
		}
		assert.Equal(t, "${datasource}", p.Datasource.UID, p.Title)
		assert.NotEmpty(t, p.Targets, p.Title)
	}
	assert.Equal(t, []string{"API (once serve)", "Outbox and relay", "Dispatchers (once dispatch)",
		"Workers and destinations (once work)", "Webhooks", "Database"}, rows)
}
