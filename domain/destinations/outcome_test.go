package destinations_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/platformerr"
)

func TestOutcomeOfSortsACallsError(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	timeout := errors.New("i/o timeout")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want destinations.Outcome
	}{
		{"no error", context.Background(), nil, succeeded},
		{"a 429", context.Background(), &platformerr.Throttled{RetryAfter: 7 * time.Second}, throttled(7 * time.Second)},
		{"a 429 of the application's quota", context.Background(), &platformerr.Throttled{RetryAfter: time.Second, Scope: platformerr.ScopeApplication},
			destinations.Outcome{Kind: destinations.Throttled, RetryAfter: time.Second, Scope: platformerr.ScopeApplication}},
		{"an upstream failure", context.Background(), platformerr.Upstream(timeout), failed},
		{"our database down", context.Background(), domain.Errorf(domain.CodeUnavailable, "database"), abandoned},
		{"our context ended", cancelled, platformerr.Upstream(timeout), abandoned},
		{"a permanent refusal", context.Background(), domain.Errorf(domain.CodeValidation, "bad sku"), succeeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, destinations.OutcomeOf(tc.ctx, tc.err))
		})
	}
}
