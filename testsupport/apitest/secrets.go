package apitest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/s3test"
)

// SecretMarker is part of every credential the tests send. When a test
// server ends, the marker must appear nowhere: not in a log line, and not in
// any column of any table (outbox payloads, saved responses, operation
// errors, task reasons; the sealed credentials too, which must be
// encrypted).
const SecretMarker = "s3cr3t-marker"

// secretMarkers are what no log line or row may carry: the credential
// marker, the signature of a pre-signed object-store URL (which is a
// credential until it expires: it goes into the one response that hands it
// out), the test S3 server's keys, and the start of every webhook signing
// secret in plaintext (sealed, it is ciphertext).
var secretMarkers = []string{SecretMarker, "x-amz-signature", "x-amz-credential", strings.ToLower(s3test.AccessKey), strings.ToLower(s3test.SecretKey), webhookSecretPrefix}

// carriesSecret says whether s contains a secret marker or an API key's
// secret (by the form secret scanners are given; its prefix alone, which
// lists show, is no secret).
func carriesSecret(s string) bool {
	if apikeys.SecretPattern.MatchString(s) {
		return true
	}
	s = strings.ToLower(s)
	for _, m := range secretMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// TestCredentials returns an API key and secret carrying the marker.
func TestCredentials() (apiKey, apiSecret string) {
	return "ak_" + SecretMarker + "_key", "sk_live_" + SecretMarker + "_9f8e7d"
}

// webhookSecretPrefix starts every webhook signing secret.
const webhookSecretPrefix = "whsec_"

// checkNoSecrets runs when every test server ends.
func (s *Server) checkNoSecrets(t testing.TB) {
	t.Helper()
	s.checkStreams(t)
	for i, line := range strings.Split(s.Logs.String(), "\n") {
		if carriesSecret(line) {
			t.Errorf("secret scan: log line %d carries a credential: %.300s", i+1, line)
		}
	}
	if s.PG == nil {
		return
	}
	db, err := sql.Open("pgx", s.PG.SuperuserDSN())
	if err != nil {
		t.Errorf("secret scan: %v", err)
		return
	}
	defer db.Close()
	for _, table := range queryStrings(t, db, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`) {
		for _, row := range queryStrings(t, db, fmt.Sprintf(`SELECT t::text FROM public.%q t`, table)) {
			if carriesSecret(row) {
				t.Errorf("secret scan: a row of %s carries a credential: %.300s", table, row)
			}
		}
	}
	// Outbox payloads carry ids only, so the pattern guard fits them;
	// saved responses hold names tenants chose ("Basic plan.png") and are
	// covered by the markers above.
	for _, doc := range queryStrings(t, db, `SELECT event_payload::text FROM outbox_events`) {
		if err := model.CheckPayloadSafe([]byte(doc)); err != nil {
			t.Errorf("secret scan: %v in %.300s", err, doc)
		}
	}
}

func queryStrings(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Errorf("secret scan: %s: %v", q, err)
		return nil
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			t.Errorf("secret scan: %v", err)
			return out
		}
		out = append(out, s.String)
	}
	if err := rows.Err(); err != nil {
		t.Errorf("secret scan: %v", err)
	}
	return out
}

// checkStreams reads every message still in the server's Redis streams
// (its queue prefix's keys, on every primary of a cluster): no field of
// one may carry a secret.
func (s *Server) checkStreams(t testing.TB) {
	t.Helper()
	if s.streams.url == "" {
		return
	}
	client, _, err := redisconn.NewClient(redisconn.Config{URL: s.streams.url})
	if err != nil {
		t.Errorf("secret scan: %v", err)
		return
	}
	defer client.Close()
	ctx := context.Background()
	if cluster, ok := client.(*redis.ClusterClient); ok {
		err = cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			s.checkStreamsOn(ctx, t, node)
			return nil
		})
	} else {
		s.checkStreamsOn(ctx, t, client)
	}
	if err != nil {
		t.Errorf("secret scan: %v", err)
	}
}

// checkStreamsOn is checkStreams on one node.
func (s *Server) checkStreamsOn(ctx context.Context, t testing.TB, node redis.Cmdable) {
	t.Helper()
	keys := node.Scan(ctx, 0, s.streams.prefix+"*", 100).Iterator()
	for keys.Next(ctx) {
		key := keys.Val()
		if kind, err := node.Type(ctx, key).Result(); err != nil || kind != "stream" {
			continue
		}
		entries, err := node.XRange(ctx, key, "-", "+").Result()
		if err != nil {
			t.Errorf("secret scan: XRANGE %s: %v", key, err)
			continue
		}
		for _, e := range entries {
			for field, v := range e.Values {
				if carriesSecret(fmt.Sprint(v)) {
					t.Errorf("secret scan: message %s of stream %s carries a credential in %s", e.ID, key, field)
				}
			}
		}
	}
	if err := keys.Err(); err != nil {
		t.Errorf("secret scan: SCAN: %v", err)
	}
}
