package app_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

const consoleToken = "console-test-operator-token-0123456789abcdef"

// chromium finds the system's Chromium (Debian's chromium package, which
// scripts/services.sh installs where missing). Without it the test is
// skipped on a developer machine and fails under CI.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (run scripts/services.sh, or apt-get install chromium)")
	}
	t.Skip("chromium is not installed; scripts/services.sh installs it")
	return ""
}

// browser starts a headless Chromium for the test and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 860),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser; it lives as long as ctx.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")), "start chromium")
	return ctx
}

// step runs actions with a deadline generous enough for a loaded machine.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(stepCtx, actions...); err != nil {
		t.Fatalf("%s: %v; the page then: %s", what, err, pageState(ctx))
	}
}

// pageState describes the page for a failure message.
func pageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return state
}

// refreshUntil clicks the console's Refresh button until the JavaScript
// condition holds: the page shows what the database holds now.
func refreshUntil(t *testing.T, ctx context.Context, what, condition string) {
	t.Helper()
	pollCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	_, err := chromedp.Run(pollCtx, chromedp.Poll[bool](`(document.getElementById("refresh").click(), `+condition+`)`,
		chromedp.WithPollingInterval(500*time.Millisecond), chromedp.WithPollingTimeout(80*time.Second)))
	if err != nil {
		t.Fatalf("%s: %v; the page then: %s", what, err, pageState(ctx))
	}
}

// An operator logs in to the console in a real browser, against
// PostgreSQL with a Dispatcher and a worker running: sees the backlog, the
// jobs parked by destination and the dead letters of other workspaces, an
// endpoint's webhook deliveries by its host, cancels an operation and
// sees it among its workspace's cancels,
// sees the dead letter of a job the worker retried and gave up on appear
// (its runs told apart from the Dispatcher's delivery attempts), looks at
// it, re-drives it, and sees it gone; the job then succeeds.
func TestConsoleInChromiumShowsAndRedrivesADeadLetter(t *testing.T) {
	ctx := browser(t)
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueMemory, true, true
	cfg.Operators = opshttp.Entry("browser-test", consoleToken)
	cfg.WorkerMaxRetries = 2 // waits of about 1 s and 2 s
	var f faults
	s := apitest.Start(t, cfg, db, f.inject())
	console := s.OpsURL + "/console/"

	// Two other workspaces whose events the Dispatcher gave up on, for the
	// same cause, and one with events not due yet (due in an hour, so the
	// running Dispatcher leaves them be).
	later := time.Now().Add(time.Hour)
	others := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for _, ws := range others {
		_, err := s.WS.Create(t.Context(), ws, "console "+ws.String()[:8], s.User)
		require.NoError(t, err)
	}
	testkit.DeadLetter(t, s.UoW, others[0], later, "cannot publish: broker unreachable after 10 attempts")
	testkit.DeadLetter(t, s.UoW, others[1], later, "cannot publish: broker unreachable after 7 attempts")
	testkit.PendingEvent(t, s.UoW, others[2], later)
	testkit.PendingEvent(t, s.UoW, others[2], later)
	// Jobs a worker parked for an hour, for one destination in two of them.
	for _, ws := range others[1:] {
		testkit.ParkedEvent(t, s.UoW, ws, time.Now(), "shopify/console-shop", later,
			model.JobWait{Kind: model.JobWaitOutage, For: "shopify/console-shop", Reason: "waiting for shopify/console-shop: breaker_open"})
	}

	step(t, ctx, "log in",
		chromedp.Navigate(console),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), consoleToken),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("refresh")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-workspace="`+others[2].String()+`"]`)),
	)
	groups, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("[data-key]")].map(g => g.querySelector(".cause").textContent + " × " + g.querySelectorAll("tr.dead-letter").length)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"cannot publish: broker unreachable after <n> attempts × 2"}, groups, "one cause, two workspaces")
	waiting, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("tr.waiting-destination")].map(r => [".destination", ".jobs", ".workspaces", ".reason"].map(c => r.querySelector(c).textContent).join(" | "))`))
	require.NoError(t, err)
	assert.Equal(t, []string{"shopify/console-shop | 2 | 2 | outage: waiting for shopify/console-shop: breaker_open"}, waiting, "the parked jobs, by destination")

	// Webhook deliveries to an endpoint of another workspace, one given up
	// on: shown by the URL's host only.
	hook := testkit.WebhookEndpoint(t, s.UoW, others[0], "https://hooks.example.com/in?token=tok_browser_0123", true)
	testkit.DeadDelivery(t, s.UoW, others[0], hook.ID, later, "job failed: webhook receiver refused the delivery with 410")
	testkit.PendingDelivery(t, s.UoW, others[0], hook.ID, time.Now(), later)
	hookRow := `tr.webhook-endpoint[data-endpoint="` + hook.ID.String() + `"]`
	refreshUntil(t, ctx, "the webhook endpoint appears", `document.querySelector('`+hookRow+`') !== null`)
	hookCells, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`(r => [".host", ".state", ".waiting", ".dead"].map(c => r.querySelector(c).textContent))(document.querySelector('`+hookRow+`'))`))
	require.NoError(t, err)
	assert.Equal(t, []string{"hooks.example.com", "enabled", "1", "1"}, hookCells)
	assert.NotContains(t, pageState(ctx), "tok_browser", "never the URL's path or query")

	// An operation of another workspace, cancelled from the page, then
	// listed among the workspace's recent cancels.
	pending := testkit.Operation(t, s.UoW, others[2], s.User, model.OperationPending, time.Now())
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.confirm = () => true, true)`)) // the page asks first
	require.NoError(t, err)
	step(t, ctx, "cancel it",
		chromedp.SendKeys(chromedp.ID("cancel-workspace"), others[2].String()),
		chromedp.SendKeys(chromedp.ID("cancel-operation"), pending.ID.String()),
		chromedp.Click(chromedp.ID("cancel-submit")),
	)
	refreshUntil(t, ctx, "the cancel is answered", `document.getElementById("cancel-result").textContent.includes("is cancelled")`)
	step(t, ctx, "show the cancels", chromedp.Click(chromedp.ID("cancels-show")))
	refreshUntil(t, ctx, "the cancel is listed", `document.querySelector('tr.cancelled-operation[data-operation="`+pending.ID.String()+`"]') !== null`)

	// A store verification the worker retries and gives up on: its event
	// is a dead letter of stage "job", delivered at the first attempt and
	// run three times.
	f.set(model.EventStoreCredentialsVerify, domain.CodeInternal)
	op := startTask(t, s, "/v1/stores", storeBody("console-"+time.Now().Format("150405.000")))
	require.Equal(t, "failed", s.WaitOperation(t, op.Operation.ID, 60*time.Second).Status)
	event, lastError, found := deadLetterOf(t, s, op)
	require.True(t, found)
	row := `tr[data-event-id="` + event.String() + `"]`

	refreshUntil(t, ctx, "the dead letter appears", `document.querySelector('`+row+`') !== null`)
	group, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`(g => [g.querySelector(".stage").textContent, g.querySelector(".cause").textContent])(document.querySelector('`+row+`').closest("[data-key]"))`))
	require.NoError(t, err)
	assert.Equal(t, []string{"failed job", operator.Cause(lastError)}, group, "a group of its own, its cause the last error (no ids in this one, the count of runs a number)")
	attempts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`(r => [r.querySelector(".delivery-attempts").textContent, r.querySelector(".job-attempts").textContent])(document.querySelector('`+row+`'))`))
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "3"}, attempts, "no delivery attempt failed; the worker ran the job once and retried it twice")
	screenshot(t, ctx)

	// Looked at: the sanitized view, then re-driven from it with the fault
	// gone.
	// Clicked from the page's script, on the row as it is now: the
	// Refresh clicked last by refreshUntil may re-render the table after
	// a click through the protocol found its button, and a click on a
	// replaced row does nothing (seen once on a loaded machine).
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('`+row+` button.view').click(), true)`))
	require.NoError(t, err)
	step(t, ctx, "look at it", chromedp.WaitVisible(chromedp.ID("detail")))
	detail, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("detail-fields")))
	require.NoError(t, err)
	assert.Contains(t, detail, event.String())
	assert.Contains(t, detail, lastError)
	assert.NotContains(t, detail, testAPIKey, "no credential is shown")
	f.clear(model.EventStoreCredentialsVerify)
	step(t, ctx, "re-drive it",
		chromedp.Click(chromedp.ID("detail-redrive")),
		chromedp.WaitNotVisible(chromedp.ID("detail")),
	)
	refreshUntil(t, ctx, "the dead letter is gone", `document.querySelector('`+row+`') === null`)
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("status")))
	require.NoError(t, err)
	assert.Equal(t, "Re-drove 1 event.", status)

	// The job runs again and succeeds.
	require.Equal(t, "succeeded", s.WaitOperation(t, op.Operation.ID, 60*time.Second).Status, "the re-driven verification")

	// The operator revokes their own sessions: the page's next call is
	// refused and it goes back to the login form.
	step(t, ctx, "revoke the sessions",
		chromedp.SendKeys(chromedp.ID("revoke-operator"), "browser-test"),
		chromedp.Click(chromedp.ID("revoke-submit")),
	)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("revoke-result").textContent !== ""`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the revocation answered: %s", pageState(ctx))
	result, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("revoke-result")))
	require.NoError(t, err)
	assert.Equal(t, "Ended 1 session(s) of browser-test.", result)
	step(t, ctx, "logged out by it", chromedp.Click(chromedp.ID("refresh")), chromedp.WaitVisible(chromedp.ID("login-submit")))

	// Each action left its audit line.
	logs := s.Logs.String()
	for _, action := range []string{`"action":"login"`, `"action":"view"`, `"action":"redrive"`, `"action":"view_webhooks"`, `"action":"cancel"`, `"action":"view_cancels"`, `"action":"revoke_sessions"`} {
		assert.Contains(t, logs, action)
	}
	assert.Contains(t, logs, `"operator":"browser-test"`)
}

// screenshot writes the page as it is now under the test's temp dir, and
// to $ONCE_CONSOLE_SCREENSHOT when set (how docs/console.png is made).
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "console.png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
	if extra := os.Getenv("ONCE_CONSOLE_SCREENSHOT"); extra != "" {
		require.NoError(t, os.WriteFile(extra, png, 0o644))
	}
}
