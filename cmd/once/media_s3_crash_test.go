package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/s3test"
	"github.com/oncehq/once/testsupport/testkit"
)

// Media on a real S3 server, uploaded straight to it with curl, processed
// by `once work` while it is killed -9 in the middle of derivations and
// while the S3 server is down: in the end every media is ready, processed
// by its one operation, with its original and one object per variant,
// each as recorded; nothing is lost.
func TestMediaOnS3SurvivesWorkerKillsAndAnOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a while")
	}
	srv := s3test.Start(t)
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	// The API here and `once work` below take the credentials from the
	// environment, as in production.
	bucket := apitest.UseS3(t, &cfg, srv)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueAMQP, true, false
	cfg.DispatchPollInterval = 100 * time.Millisecond
	deleteAMQPTopicsLater(t, cfg.AMQPURL, cfg.QueuePrefix)
	api := apitest.Start(t, cfg, db)
	env := []string{
		"DATABASE_URL=" + db.AppDSN,
		"ONCE_JWT_SECRET=" + cfg.JWTSecret,
		"ONCE_IDEMPOTENCY_SECRETS=" + cfg.IdempotencySecrets,
		"ONCE_CREDENTIAL_KEYS=" + cfg.CredentialKeys,
		"ONCE_QUEUE=" + app.QueueAMQP,
		"ONCE_AMQP_URL=" + cfg.AMQPURL,
		"ONCE_QUEUE_PREFIX=" + cfg.QueuePrefix,
		"ONCE_OBJECT_STORE=s3",
		"ONCE_S3_ENDPOINT=" + srv.Endpoint,
		"ONCE_S3_BUCKET=" + bucket,
		"ONCE_S3_PATH_STYLE=true",
		"ONCE_S3_REGION=" + s3test.Region,
		// An outage of the store spends no retry (the default 5 stays):
		// it is waited out like a destination's.
		"ONCE_LOG_LEVEL=warn",
	}

	const n = 40
	type started struct{ media, op uuid.UUID }
	var all []started
	for i := range n {
		reg := api.UploadDirect(t, testkit.PNG(t, 900+i, 700))
		done := api.Do(t, http.MethodPost, "/v1/media/"+reg.Media.ID.String()+"/complete", nil, map[string]string{"Idempotency-Key": uuid.NewString()})
		require.Equal(t, http.StatusAccepted, done.Status, "%s", done.Body)
		var completed httpapi.MediaCompleted
		done.JSON(t, &completed)
		all = append(all, started{reg.Media.ID, completed.Operation.ID})
	}

	// Each worker is killed -9 once it made progress: in the middle of the
	// derivations of the media it holds.
	ready := func() int { return countMedia(t, api, "ready") }
	var workers []*process
	for range 3 {
		before := ready()
		w := startOnce(t, env, "work")
		workers = append(workers, w)
		apitest.Eventually(t, 3*time.Minute, "progress", func() bool { return ready() > before })
		w.kill()
		t.Logf("worker killed with %d of %d media ready", ready(), n)
	}

	// The store goes down under a working worker for 30 s, longer than
	// the default retries' backoff adds up to (1+2+4+8+16 s), and comes
	// back on the same port and data.
	w := startOnce(t, env, "work")
	workers = append(workers, w)
	srv.Stop()
	apitest.Eventually(t, 3*time.Minute, "the worker meets the outage", func() bool {
		return strings.Count(w.output.String(), "will be retried") >= 3
	})
	time.Sleep(30 * time.Second) // the outage's length, the scenario's own: nothing waits on a race here
	srv.Restart(t)
	t.Logf("store back with %d of %d media ready", ready(), n)

	apitest.Eventually(t, 3*time.Minute, "every media ready", func() bool { return ready() == n })
	store := srv.StoreOn(t, bucket)
	ctx := context.Background()
	for _, s := range all {
		op := api.WaitOperation(t, s.op, time.Second)
		assert.Equal(t, "succeeded", op.Status, "media %s: %s", s.media, op.Error)
		r := api.Do(t, http.MethodGet, "/v1/media/"+s.media.String(), nil, nil)
		require.Equal(t, http.StatusOK, r.Status)
		var m httpapi.Media
		r.JSON(t, &m)
		require.Len(t, m.Variants, 2, "media %s", s.media)
		for _, v := range m.Variants {
			info, err := store.Stat(ctx, media.VariantKey(api.Workspace, s.media, v.Name))
			require.NoError(t, err, "variant %s of %s", v.Name, s.media)
			assert.Equal(t, v.SizeBytes, info.Size, "variant %s of %s as recorded", v.Name, s.media)
		}
	}
	assert.Zero(t, countOperations(t, api, "failed"))
	// The API's logs and database are scanned when it stops; the workers'
	// logs here.
	for _, w := range workers {
		out := strings.ToLower(w.output.String())
		for _, secret := range []string{"x-amz-signature", "x-amz-credential", strings.ToLower(s3test.SecretKey), strings.ToLower(s3test.AccessKey)} {
			assert.NotContains(t, out, secret, "a worker's log carries a store credential")
		}
	}
}

// countMedia and countOperations count the rows of the API's workspace
// in status.
func countMedia(t *testing.T, api *apitest.Server, status string) int {
	return countIn(t, api, "media", status)
}

func countOperations(t *testing.T, api *apitest.Server, status string) int {
	return countIn(t, api, "operations", status)
}

func countIn(t *testing.T, api *apitest.Server, table, status string) int {
	t.Helper()
	var n int
	err := api.PG.App.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.workspace_id', ?, true)", api.Workspace.String()); err != nil {
			return err
		}
		return tx.NewSelect().Table(table).ColumnExpr("count(*)").Where("status = ?", status).Scan(ctx, &n)
	})
	require.NoError(t, err)
	return n
}
