package webhooks

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/oncehq/once/domain"
)

// The headers of a signed delivery (Standard Webhooks).
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// SignatureHeaders are the headers that sign body as the message id sent
// at at, with each of secrets ("whsec_..."): webhook-id, webhook-timestamp
// (Unix seconds) and webhook-signature, one "v1,<base64 HMAC-SHA256 of
// id.timestamp.body>" per secret, space-separated, so a receiver that
// holds either secret of a rotation accepts the delivery. The id must stay
// the same across retries of one delivery: receivers dedupe on it.
//
// Errors: CodeInternal for no secret or one that is not a whsec_ key.
func SignatureHeaders(id string, at time.Time, body []byte, secrets []string) (http.Header, error) {
	if len(secrets) == 0 {
		return nil, domain.Errorf(domain.CodeInternal, "a webhook delivery needs a signing secret")
	}
	sigs := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return nil, domain.Wrap(domain.CodeInternal, err, "a webhook secret is malformed")
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return nil, domain.Wrap(domain.CodeInternal, err, "a webhook delivery cannot be signed")
		}
		sigs = append(sigs, sig)
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return h, nil
}
