package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "once ops test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	rawKey, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "ops.crt"), filepath.Join(dir, "ops.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: rawKey}), 0o600))
	return certFile, keyFile, pool
}

// tokenHash is what ONCE_OPERATORS holds of a token: its SHA-256 in hex.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// `once operator hash NAME` reads a token on its standard input and prints
// the ONCE_OPERATORS entry of it: the name and the token's hash, never the
// token.
func TestOperatorHashPrintsAnEntry(t *testing.T) {
	token := "alice-operator-token-0123456789abcdef0123"
	cmd := exec.Command(onceBinary(t), "operator", "hash", "alice")
	cmd.Stdin = strings.NewReader(token + "\n")
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "alice:"+tokenHash(token), strings.TrimSpace(string(out)))

	cmd = exec.Command(onceBinary(t), "operator", "hash", "alice")
	cmd.Stdin = strings.NewReader("too-short\n")
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "32")
}

// The ops listener over TLS (ONCE_OPS_TLS_CERT_FILE, ONCE_OPS_TLS_KEY_FILE)
// to named operators (ONCE_OPERATORS): a client trusting the certificate
// reaches it, plain HTTP does not; each operator's token names them in the
// audit log whatever X-Operator says, and the console's session cookie is
// Secure.
func TestTheOpsListenerOverTLSToNamedOperators(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	alice, bob := "alice-operator-token-0123456789abcdef0123", "bob-operator-token-0123456789abcdef012345"
	ops := freeAddr(t)
	p := startOnce(t, []string{
		"ONCE_HTTP_ADDR=" + freeAddr(t), "ONCE_OPS_ADDR=" + ops,
		"ONCE_OPS_TLS_CERT_FILE=" + certFile, "ONCE_OPS_TLS_KEY_FILE=" + keyFile,
		"ONCE_OPERATORS=alice:" + tokenHash(alice) + ",bob:" + tokenHash(bob),
		"ONCE_LOG_FORMAT=json",
	}, "serve")
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       5 * time.Second,
	}
	base := "https://" + ops
	apitest.Eventually(t, 60*time.Second, "the ops listener over TLS", func() bool {
		select {
		case <-p.done:
			t.Fatalf("exited:\n%s", p.output.String())
		default:
		}
		res, err := client.Get(base + "/healthz")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	res, err := http.Get("http://" + ops + "/healthz")
	if err == nil {
		_ = res.Body.Close()
		assert.NotEqual(t, http.StatusOK, res.StatusCode, "plain HTTP is not served")
	}

	req, err := http.NewRequest(http.MethodGet, base+"/console/api/backlog", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+alice)
	req.Header.Set("X-Operator", "mallory")
	res, err = client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	apitest.Eventually(t, 10*time.Second, "the audit line", func() bool {
		return strings.Contains(p.output.String(), `"action":"view_backlog"`)
	})
	for line := range strings.SplitSeq(p.output.String(), "\n") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) == nil && entry["action"] == "view_backlog" {
			assert.Equal(t, "alice", entry["operator"], line)
		}
	}

	form := url.Values{"token": {bob}}
	req, err = http.NewRequest(http.MethodPost, base+"/console/login", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Len(t, res.Cookies(), 1)
	assert.True(t, res.Cookies()[0].Secure, "the session cookie travels over TLS only")
}

// `once operator revoke NAME` ends every console session of NAME where
// every process reads them, and no one else's.
func TestOperatorRevokeEndsTheirSessions(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	sessions := postgres.NewOperatorSessions(db.App)
	now := time.Now()
	session := func(operator string) model.OperatorSession {
		return model.OperatorSession{ID: uuid.NewString(), Operator: operator, Credential: "fp", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	alice1, alice2, bob := session("alice"), session("alice"), session("bob")
	for _, s := range []model.OperatorSession{alice1, alice2, bob} {
		require.NoError(t, sessions.Create(t.Context(), s))
	}
	out := runOnce(t, []string{
		"DATABASE_URL=" + db.AppDSN, "ONCE_JWT_SECRET=" + cfg.JWTSecret,
		"ONCE_IDEMPOTENCY_SECRETS=" + cfg.IdempotencySecrets, "ONCE_CREDENTIAL_KEYS=" + cfg.CredentialKeys,
	}, "operator", "revoke", "alice")
	assert.Equal(t, "revoked 2 session(s) of alice", lastLine(out))
	for _, s := range []model.OperatorSession{alice1, alice2, bob} {
		_, ok, err := sessions.Get(t.Context(), s.ID, now)
		require.NoError(t, err)
		assert.Equal(t, s.Operator == "bob", ok, s.Operator)
	}
}
