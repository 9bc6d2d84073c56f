package platformerr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/platformerr"
)

func TestRetryable(t *testing.T) {
	ctx := context.Background()
	assert.True(t, platformerr.Retryable(ctx, domain.Errorf(domain.CodeUnavailable, "down")))
	assert.True(t, platformerr.Retryable(ctx, fmt.Errorf("x: %w", context.DeadlineExceeded)))
	assert.False(t, platformerr.Retryable(ctx, domain.Errorf(domain.CodeForbidden, "no")))
	assert.False(t, platformerr.Retryable(ctx, errors.New("plain")))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.True(t, platformerr.Retryable(cancelled, domain.Errorf(domain.CodeForbidden, "no")))
}

func TestReasonKeepsTheClientSafeMessageOnly(t *testing.T) {
	err := domain.Wrap(domain.CodeForbidden, errors.New("api_key=ak_live_123 refused"), "app not installed")
	assert.Equal(t, "base: app not installed", platformerr.Reason("base", err))
	assert.Equal(t, "base", platformerr.Reason("base", errors.New("api_key=ak_live_123")))
	assert.NotContains(t, platformerr.Reason("base", domain.Errorf(domain.CodeForbidden, "secret=hunter2")), "hunter2")
}
