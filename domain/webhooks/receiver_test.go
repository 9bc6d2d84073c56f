package webhooks_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/testsupport/webhooktest"
)

// A receiver written with the standardwebhooks npm package (not our code)
// accepts what SignatureHeaders signs, with the current secret alone or
// during a rotation, counts a webhook-id once, and refuses a forged, an
// altered and a replayed delivery.
func TestAStockReceiverVerifiesSignedDeliveries(t *testing.T) {
	oldSecret, err := webhooks.NewSecret()
	require.NoError(t, err)
	newSecret, err := webhooks.NewSecret()
	require.NoError(t, err)
	forger, err := webhooks.NewSecret()
	require.NoError(t, err)
	receiver := webhooktest.Start(t, oldSecret)
	body := []byte(`{"type":"operation.succeeded","data":{"operation_id":"0b7c1f0e-2f4a-4d8c-9a51-3c2e7f6d8b90","status":"succeeded"}}`)

	post := func(id string, at time.Time, body []byte, secrets []string, alter func(h http.Header, body []byte) []byte) (int, webhooktest.Verdict) {
		t.Helper()
		h, err := webhooks.SignatureHeaders(id, at, body, secrets)
		require.NoError(t, err)
		if alter != nil {
			body = alter(h, body)
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, receiver.URL, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header = h
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode, receiver.Next(t)
	}

	status, v := post("d1", time.Now(), body, []string{oldSecret}, nil)
	require.Equal(t, http.StatusNoContent, status, v.Error)
	require.True(t, v.OK && v.First, "%+v", v)

	// A retry of the same delivery verifies and is recognised.
	status, v = post("d1", time.Now(), body, []string{oldSecret}, nil)
	require.Equal(t, http.StatusNoContent, status, v.Error)
	require.True(t, v.OK, "%+v", v)
	require.False(t, v.First, "the same webhook-id is counted once")

	// During a rotation, signed with both: the receiver still holding the
	// old secret accepts it.
	status, v = post("d2", time.Now(), body, []string{newSecret, oldSecret}, nil)
	require.Equal(t, http.StatusNoContent, status, v.Error)
	require.True(t, v.OK && v.First, "%+v", v)

	status, v = post("forged", time.Now(), body, []string{forger}, nil)
	require.Equal(t, http.StatusBadRequest, status)
	require.False(t, v.OK, "a forged delivery fails")

	status, v = post("altered", time.Now(), body, []string{oldSecret}, func(_ http.Header, body []byte) []byte {
		return bytes.Replace(body, []byte("succeeded"), []byte("failed"), 1)
	})
	require.Equal(t, http.StatusBadRequest, status)
	require.False(t, v.OK, "an altered body fails")

	status, v = post("altered-id", time.Now(), body, []string{oldSecret}, func(h http.Header, body []byte) []byte {
		h.Set("webhook-id", "d1-other")
		return body
	})
	require.Equal(t, http.StatusBadRequest, status)
	require.False(t, v.OK, "an altered id fails")

	// Replayed later: the timestamp is outside the receiver's tolerance
	// (five minutes), though the signature is genuine.
	status, v = post("replayed", time.Now().Add(-10*time.Minute), body, []string{oldSecret}, nil)
	require.Equal(t, http.StatusBadRequest, status)
	require.False(t, v.OK, "a replayed delivery fails")
}
