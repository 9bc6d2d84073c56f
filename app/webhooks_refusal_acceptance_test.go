package app_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/webhooktest"
)

// A receiver that refuses a delivery (401, 404, 410: an endpoint whose
// owner must fix it) spends the delivery's attempts: after the worker's
// retries it is a dead letter, listed so, for an admin to re-drive once
// the receiver is fixed. It is not waited out like an outage, which would
// POST it again and again for the three days a delivery is retried.
func TestAWebhookReceiverThatRefusesSpendsTheDeliverysAttempts(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusGone} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			cfg := apitest.Config("")
			cfg.Dispatcher, cfg.Worker = true, true
			cfg.FetchAllowCIDRs = "127.0.0.0/8"
			cfg.WorkerMaxRetries = 1
			s := apitest.Start(t, cfg, nil)

			receiver := webhooktest.NewCounter(t)
			receiver.Fail(status)
			endpoint := subscribe(t, s, receiver)
			verifiedStore(t, s)

			runs := cfg.WorkerMaxRetries + 1 // the first run and the retries
			var listed httpapi.ListOf[httpapi.WebhookDelivery]
			apitest.Eventually(t, 30*time.Second, "the delivery given up on, or POSTed more than its attempts allow", func() bool {
				res := s.Do(t, http.MethodGet, "/v1/webhook-endpoints/"+endpoint.String()+"/deliveries", nil, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				res.JSON(t, &listed)
				return (len(listed.Items) == 1 && listed.Items[0].State == "dead_letter") || receiver.State().Refused > runs
			})
			require.Len(t, listed.Items, 1)
			d := listed.Items[0]
			require.Equal(t, "dead_letter", d.State, "after %d refusals the delivery is %s (%d attempts, %q)",
				receiver.State().Refused, d.State, d.Attempts, d.LastError)
			require.Contains(t, d.LastError, strconv.Itoa(status))
			require.Equal(t, runs, receiver.State().Refused, "the first POST and the retries, no more")
		})
	}
}
