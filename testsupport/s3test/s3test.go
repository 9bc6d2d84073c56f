// Package s3test runs a real S3-compatible server for tests: a private
// versitygw on a free loopback port with its own data directory, stopped
// when the test ends, and a bucket of its own for each store a test makes.
//
//	srv := s3test.Start(t)
//	store := srv.NewStore(t) // an s3store.Store on a new bucket
//
// The server can be stopped and started again on the same port and data
// (Stop, Restart) to play an outage of the store.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/oncehq/once/adapters/objectstore/s3store"
	"github.com/oncehq/once/testsupport/testkit"
)

// The root user of every test server, and its region. They are test
// values: the server listens on loopback only and lives as long as the
// test.
const (
	AccessKey = "once-test-access"
	SecretKey = "once-test-secret-key-0123456789"
	Region    = "us-east-1"
)

// Bounds of a server's start: tries on fresh ports, and how long one try
// waits for the server to answer.
const (
	startTries   = 5
	startTimeout = 20 * time.Second
)

// Server is one running versitygw.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:<port>.
	Endpoint string

	bin, data, meta, addr string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	output *testkit.LogBuffer
}

// Start starts a server for t and stops it when t ends. It fails t if the
// server cannot be built or started.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := EnsureBinary()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	s := &Server{bin: bin, data: filepath.Join(root, "data"), meta: filepath.Join(root, "meta")}
	for _, dir := range []string{s.data, s.meta} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var errs []error
	for range startTries {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		if err = s.run(addr); err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		errs = append(errs, err)
	}
	t.Fatalf("s3test: the S3 server did not start: %v", errors.Join(errs...))
	return nil
}

// Config is the s3store configuration of bucket on this server.
func (s *Server) Config(bucket string) s3store.Config {
	return s3store.Config{Endpoint: s.Endpoint, Region: Region, Bucket: bucket, PathStyle: true, AccessKey: AccessKey, SecretKey: SecretKey}
}

// NewBucket creates a bucket with a new name and returns the name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "test-" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.client().MakeBucket(ctx, name, minio.MakeBucketOptions{Region: Region}); err != nil {
		t.Fatalf("s3test: create bucket: %v", err)
	}
	return name
}

// NewStore returns a store on a new bucket of the server.
func (s *Server) NewStore(t testing.TB) *s3store.Store {
	t.Helper()
	return s.StoreOn(t, s.NewBucket(t))
}

// StoreOn returns a store on bucket, to look at what the service under
// test stored there.
func (s *Server) StoreOn(t testing.TB, bucket string) *s3store.Store {
	t.Helper()
	store, err := s3store.New(s.Config(bucket))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// Stop kills the server and waits for it to end. Its data stays, for
// Restart. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts a stopped server again on its port and data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.run(s.addr); err != nil {
		t.Fatalf("s3test: restart the S3 server: %v", err)
	}
}

func (s *Server) run(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(s.bin,
		"--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--port", addr, "--quiet",
		// Metadata (content type, checksums) in a directory of its own
		// rather than in extended attributes, which not every file system
		// under a temporary directory has.
		"posix", "--sidecar", s.meta, s.data)
	out := &testkit.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.addr, s.Endpoint = addr, "http://"+addr
	if err := s.waitReady(exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("%w\n%s", err, out.String())
	}
	s.cmd, s.exited, s.output = cmd, exited, out
	return nil
}

// waitReady polls the server until it answers an authenticated request.
func (s *Server) waitReady(exited <-chan struct{}) error {
	c := s.client()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("versitygw on %s exited", s.addr)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw on %s did not answer within %s: %v", s.addr, startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PutWithoutChecksum writes data as object name of bucket with no
// SHA-256 checksum, as a client of the bucket other than the service may.
func (s *Server) PutWithoutChecksum(t testing.TB, bucket, name string, data []byte, contentType string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	_, err := s.client().PutObject(ctx, bucket, name, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		t.Fatalf("s3test: put without checksum: %v", err)
	}
}

// client is a plain client of the server, for administration.
func (s *Server) client() *minio.Client {
	c, err := minio.New(s.addr, &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: Region,
		BucketLookup: minio.BucketLookupPath, MaxRetries: 1,
		Transport: &http.Transport{DisableKeepAlives: true},
	})
	if err != nil {
		panic(err) // only for a malformed address, which freeAddr never makes
	}
	return c
}

// freeAddr asks the kernel for a free loopback port. Another process may
// take it before the server binds it: Start then tries another.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)), nil
}
