package webhooks_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/webhooks"
)

// The specification's published example: this secret, id, timestamp and
// body sign as this signature.
func TestSignatureMatchesThePublishedVector(t *testing.T) {
	h, err := webhooks.SignatureHeaders("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0),
		[]byte(`{"test": 2432232314}`), []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	require.NoError(t, err)
	require.Equal(t, "msg_p5jXN8AQM9LWM0D4loKWxJek", h.Get("webhook-id"))
	require.Equal(t, "1614265330", h.Get("webhook-timestamp"))
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", h.Get("webhook-signature"))
}

// During a rotation a receiver holding either secret accepts a delivery;
// one with another secret, or an altered body, refuses it.
func TestSignedWithBothSecretsOfARotation(t *testing.T) {
	oldSecret, err := webhooks.NewSecret()
	require.NoError(t, err)
	newSecret, err := webhooks.NewSecret()
	require.NoError(t, err)
	stranger, err := webhooks.NewSecret()
	require.NoError(t, err)
	body := []byte(`{"type":"operation.succeeded"}`)
	h, err := webhooks.SignatureHeaders("01J0000000000000000000000", time.Now(), body, []string{newSecret, oldSecret})
	require.NoError(t, err)
	require.Len(t, strings.Split(h.Get("webhook-signature"), " "), 2)

	verify := func(secret string, body []byte, h http.Header) error {
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		return wh.Verify(body, h)
	}
	require.NoError(t, verify(newSecret, body, h))
	require.NoError(t, verify(oldSecret, body, h))
	require.Error(t, verify(stranger, body, h))
	require.Error(t, verify(newSecret, []byte(`{"type":"operation.failed"}`), h))
}

func TestSigningNeedsAWellFormedSecret(t *testing.T) {
	_, err := webhooks.SignatureHeaders("id", time.Now(), nil, nil)
	require.Error(t, err)
	_, err = webhooks.SignatureHeaders("id", time.Now(), nil, []string{"whsec_not base64!"})
	require.Error(t, err)
}
