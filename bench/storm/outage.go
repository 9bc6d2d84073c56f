package storm

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/oncehq/once/testsupport/faultproxy"
)

// outageResult is one run of the broker outage.
type outageResult struct {
	Outage time.Duration
	loadRun
}

// runOutage runs the split service with the Dispatcher and the worker
// reaching Redis through a fault proxy, and cuts it for cfg.Outage under
// load.
func runOutage(ctx context.Context, r *runner, d *deployment, progress io.Writer) (outageResult, error) {
	cfg := r.cfg
	res := outageResult{Outage: cfg.Outage}
	target, err := redisAddress(cfg.RedisURL)
	if err != nil {
		return res, err
	}
	proxy, err := faultproxy.Listen(target)
	if err != nil {
		return res, err
	}
	defer proxy.Down()
	viaProxy, err := redisVia(cfg.RedisURL, proxy.Addr())
	if err != nil {
		return res, err
	}
	if err := startSplit(ctx, d, viaProxy); err != nil {
		return res, err
	}
	res.loadRun, _, err = underLoad(ctx, r, d, progress, func() (time.Time, error) {
		proxy.Down()
		fmt.Fprintf(progress, "[%s] broker cut for %s\n", d.label, cfg.Outage)
		if err := sleepReporting(ctx, cfg.Outage, func() {
			b, _ := readBacklog(ctx, d.super)
			fmt.Fprintf(progress, "[%s] broker down: %d events, %d waiting, %d dead letters, max attempts %d\n",
				d.label, b.Events, b.Waiting, b.DeadLetters, b.MaxAttempts)
		}); err != nil {
			return time.Time{}, err
		}
		if err := proxy.Restore(); err != nil {
			return time.Time{}, err
		}
		fmt.Fprintf(progress, "[%s] broker back\n", d.label)
		return time.Now(), nil
	})
	return res, err
}
