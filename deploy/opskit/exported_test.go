package opskit

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The kit's files, relative to this package.
const (
	rulesFile     = "../prometheus/once-rules.yaml"
	dashboardFile = "../grafana/once.json"
	queriesFile   = "../postgres_exporter/once-queries.yaml"
)

// external are the series the kit reads that no once process exports and
// that are not the kit's own: Prometheus's up per target, and the
// blackbox exporter's probe of /readyz (docs/operating.md says how to
// scrape both).
var external = map[string][]string{
	"up":            {"job", "instance"},
	"probe_success": {"job", "instance"},
}

const operatorToken = "opskit-test-operator-token-0123456789abcdef"

// Every metric and label the alert rules and the dashboard name is one
// that a process exports: serve, dispatch and work run (PostgreSQL, Redis
// Streams) and do what makes their series appear: API requests under the
// workspaces' limits, jobs, a webhook delivered, one refused (a job given
// up on, a dead letter), an endpoint down long enough for its breaker to
// open, a destination paused by hand. Then every ops listener is scraped.
// The postgres_exporter queries the kit ships run on the same database.
// A name broken in a copy of the rules is reported: the check can fail.
func TestTheKitNamesOnlyWhatTheProcessesExport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts serve, dispatch and work")
	}
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue = app.QueueRedis
	cfg.FetchAllowCIDRs = "127.0.0.0/8"
	cfg.DispatchPollInterval = 50 * time.Millisecond
	cfg.OperatorToken = operatorToken
	serveCfg := cfg
	// The limits are on, as by default, so that their checks are counted.
	serveCfg.RateLimit, serveCfg.WorkspaceMaxConcurrency = "1000/s:2000", "auto"
	serve := apitest.Start(t, serveCfg, db)
	dispatchCfg := cfg
	dispatchCfg.Dispatcher = true
	dispatch := apitest.Start(t, dispatchCfg, db)
	workCfg := cfg
	workCfg.Worker = true
	work := apitest.Start(t, workCfg, db)

	answering := receiver(t, http.StatusNoContent)
	refusing := receiver(t, http.StatusGone)
	down := receiver(t, http.StatusServiceUnavailable)
	for _, url := range []string{answering, refusing, down} {
		r := serve.Do(t, http.MethodPost, "/v1/webhook-endpoints",
			map[string]any{"url": url, "event_types": []string{model.WebhookOperationSucceeded}},
			map[string]string{"Idempotency-Key": uuid.NewString()})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	}
	// Each succeeded operation is a delivery to each endpoint: the down
	// one fails as often as its breaker needs to open (5, the default).
	apiKey, apiSecret := apitest.TestCredentials()
	for i := range 6 {
		r := serve.Do(t, http.MethodPost, "/v1/stores", map[string]any{
			"platform": "shopify", "name": "Ops kit shop", "external_shop_id": "opskit-" + uuid.NewString()[:8],
			"credentials": map[string]any{"api_key": apiKey, "api_secret": apiSecret},
		}, map[string]string{"Idempotency-Key": uuid.NewString()})
		require.Equal(t, http.StatusCreated, r.Status, "store %d: %s", i, r.Body)
		var created struct {
			Operation struct {
				ID uuid.UUID `json:"id"`
			} `json:"operation"`
		}
		r.JSON(t, &created)
		op := serve.WaitOperation(t, created.Operation.ID, time.Minute)
		require.Equal(t, "succeeded", op.Status, op.Error)
	}
	pause, err := http.NewRequest(http.MethodPost, work.OpsURL+"/destinations/pause?destination=ai/default&for=1h", nil)
	require.NoError(t, err)
	pause.Header.Set("Authorization", "Bearer "+operatorToken)
	res, err := http.DefaultClient.Do(pause)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusNoContent, res.StatusCode)

	apitest.Eventually(t, 2*time.Minute, "a delivery given up on and an endpoint's breaker open", func() bool {
		m := work.Metrics(t)
		return strings.Contains(m, `once_worker_jobs_total{outcome="given_up",type="webhook.deliver"}`) &&
			strings.Contains(m, `once_destination_breaker_open{destination="webhook/`)
	})

	exported := Exported{}
	for name, s := range map[string]*apitest.Server{"serve": serve, "dispatch": dispatch, "work": work} {
		require.NoError(t, exported.AddScrape(strings.NewReader(s.Metrics(t))), name)
	}
	for metric, labels := range external {
		exported.Add(metric, labels...)
	}
	queries, err := os.ReadFile(queriesFile)
	require.NoError(t, err)
	require.NoError(t, exported.AddPostgresExporterQueries(queries))
	runExporterQueries(t, db, queries)

	rules, panels := kitQueries(t)
	assert.Empty(t, Check(rules, exported), "names in the rules that no process exports")
	// The dashboard reads no recorded series: it works without the rules.
	assert.Empty(t, Check(panels, exported), "names in the dashboard that no process exports")
	kit := append(rules, panels...)
	named := map[string]bool{}
	for _, q := range kit {
		refs, err := Parse(q.Expr)
		require.NoError(t, err, q.Where)
		for _, m := range refs.Metrics() {
			named[m] = true
		}
	}
	t.Logf("%d expressions name %d series; the processes and the kit export %d", len(kit), len(named), len(exported))

	// The check fails on a broken name: a metric misspelt, a label that
	// does not exist.
	raw, err := os.ReadFile(rulesFile)
	require.NoError(t, err)
	broken := strings.Replace(string(raw), "max(once_outbox_oldest_due_age_seconds)", "max(once_outbox_oldest_due_age_second)", 1)
	broken = strings.Replace(broken, `once_worker_jobs_total{outcome="given_up", type!="webhook.deliver"}`, `once_worker_jobs_total{result="given_up", type!="webhook.deliver"}`, 1)
	require.NotEqual(t, string(raw), broken)
	brokenQueries, err := RuleQueries("once-rules.yaml", []byte(broken))
	require.NoError(t, err)
	problems := Check(brokenQueries, exported)
	assert.Contains(t, problems, "once-rules.yaml: record once:outbox_oldest_due_age_seconds:max: metric once_outbox_oldest_due_age_second is exported by no process")
	assert.Contains(t, problems, "once-rules.yaml: alert OnceJobsGivenUp: label result of once_worker_jobs_total is exported by no process")
}

// kitQueries are the rules' expressions and the dashboard's.
func kitQueries(t *testing.T) (rules, panels []Query) {
	t.Helper()
	raw, err := os.ReadFile(rulesFile)
	require.NoError(t, err)
	rules, err = RuleQueries("once-rules.yaml", raw)
	require.NoError(t, err)
	raw, err = os.ReadFile(dashboardFile)
	require.NoError(t, err)
	panels, err = DashboardQueries("once.json", raw)
	require.NoError(t, err)
	require.NotEmpty(t, panels)
	return rules, panels
}

// receiver is a webhook receiver that answers every delivery with status.
func receiver(t *testing.T, status int) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	t.Cleanup(s.Close)
	return s.URL + "/hook"
}

// runExporterQueries runs each postgres_exporter query on db as a role
// with the grants docs/operating.md gives postgres_exporter's, and checks
// it answers one row with every column its metrics name.
func runExporterQueries(t *testing.T, db *pgtest.DB, raw []byte) {
	t.Helper()
	file, err := ParseExporterQueries(raw)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := sql.Open("pgx", exporterRole(ctx, t, db))
	require.NoError(t, err)
	defer conn.Close()
	for name, q := range file {
		rows, err := conn.QueryContext(ctx, q.Query)
		require.NoError(t, err, name)
		columns, err := rows.Columns()
		require.NoError(t, err, name)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err(), name)
		require.NoError(t, rows.Close())
		assert.Equal(t, 1, n, "%s answers one row", name)
		for _, m := range q.Metrics {
			for column := range m {
				assert.Contains(t, columns, column, name)
			}
		}
	}
}

// exporterRole creates a login role with the grants docs/operating.md
// gives postgres_exporter's role (dropped when t ends) and returns its DSN
// to db.
func exporterRole(ctx context.Context, t *testing.T, db *pgtest.DB) string {
	t.Helper()
	role := "opskit_exporter_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	super, err := sql.Open("pgx", pgtest.SuperuserDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = super.Close() })
	dbDSN, err := url.Parse(pgtest.SuperuserDSN())
	require.NoError(t, err)
	dbDSN.Path = "/" + db.Name
	superInDB, err := sql.Open("pgx", dbDSN.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = superInDB.Close() })
	_, err = super.ExecContext(ctx, "CREATE ROLE "+role+" LOGIN")
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		_, err := superInDB.ExecContext(ctx, "DROP OWNED BY "+role)
		assert.NoError(t, err)
		_, err = super.ExecContext(ctx, "DROP ROLE "+role)
		assert.NoError(t, err)
	})
	for _, grant := range exporterGrants(t) {
		grant = strings.ReplaceAll(grant, "postgres_exporter", role)
		grant = strings.ReplaceAll(grant, "DATABASE once ", "DATABASE "+db.Name+" ")
		conn := super
		if strings.Contains(grant, " ON FUNCTION ") || strings.Contains(grant, " ON SCHEMA ") {
			conn = superInDB
		}
		_, err := conn.ExecContext(ctx, grant)
		require.NoError(t, err, grant)
	}
	dbDSN.User = url.User(role)
	return dbDSN.String()
}

// exporterGrants are the GRANT statements of docs/operating.md's
// postgres_exporter paragraph.
func exporterGrants(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(operatingDoc)
	require.NoError(t, err)
	var grants []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "GRANT ") && strings.Contains(line, "postgres_exporter") {
			grants = append(grants, strings.TrimSuffix(strings.TrimSpace(line), ";"))
		}
	}
	require.NotEmpty(t, grants, "docs/operating.md grants postgres_exporter's role nothing")
	return grants
}
