// Package s3store implements ports.ObjectStore and ports.ObjectPresigner on
// an S3-compatible object store (AWS S3, Cloudflare R2, Alibaba OSS, MinIO,
// versitygw), so several `once` processes on several machines share one
// store and clients move bytes straight to and from it with pre-signed URLs.
//
// It is built on minio-go (github.com/minio/minio-go/v7) rather than
// aws-sdk-go-v2: one module with a small dependency tree instead of a dozen
// service modules, path-style and virtual-host addressing by one option,
// the usual AWS credential sources as one chain, and SigV4 pre-signing of
// extra headers (PresignHeader), which a direct upload needs to bind the
// content type, checksum and length to the URL.
//
// Layout: the object of key k is the S3 object Prefix+k in the bucket.
// Every object is written in one request (never multipart: objects are at
// most tens of MiB) with its SHA-256 as an S3 checksum
// (x-amz-checksum-sha256), which the server verifies on receipt and
// reports on Stat, so the digest never needs a sidecar. PutIfAbsent is a
// conditional write (If-None-Match: *), which the server decides, so
// concurrent writers from any number of processes make one object.
package s3store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/oncehq/once/adapters/objectstore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

var (
	_ ports.ObjectStore     = (*Store)(nil)
	_ ports.ObjectPresigner = (*Store)(nil)
)

// Config says where the store is and how to sign.
type Config struct {
	// Endpoint is the store's URL, such as https://s3.eu-central-1.amazonaws.com
	// or http://127.0.0.1:9000 (http only for a store on a private network).
	Endpoint string
	// Region signs requests; stores that ignore regions take any value
	// ("auto" for R2).
	Region string
	Bucket string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// rather than in the host name (bucket.endpoint/key).
	PathStyle bool
	// Prefix is put before every key, so deployments can share a bucket.
	Prefix string
	// AccessKey and SecretKey, when set, are the credentials; otherwise they
	// come from the usual AWS sources in order: the environment
	// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the
	// shared credentials file (~/.aws/credentials, AWS_PROFILE), and the
	// instance's or task's IAM role.
	AccessKey string
	SecretKey string
	// Transport carries the requests; nil is http.DefaultTransport's clone.
	Transport http.RoundTripper
}

// Store is an object store in an S3 bucket.
type Store struct {
	client *minio.Client
	bucket string
	prefix string
}

// maxRetries bounds the client's own retries of a failed request: the
// jobs that call the store retry with their own backoff, and an API call
// should fail fast rather than hold its request.
const maxRetries = 2

// New returns a store on cfg. It does not contact the store.
//
// Errors: domain.CodeValidation for an unusable endpoint, bucket or prefix.
func New(cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, domain.Errorf(domain.CodeValidation, "S3 endpoint must be an http or https URL with a host and no path, query or user")
	}
	if cfg.Bucket == "" {
		return nil, domain.Errorf(domain.CodeValidation, "S3 bucket must not be empty")
	}
	if cfg.Prefix != "" {
		if err := objectstore.ValidateKey(strings.TrimSuffix(cfg.Prefix, "/")); err != nil || !strings.HasSuffix(cfg.Prefix, "/") {
			return nil, domain.Errorf(domain.CodeValidation, "S3 prefix must be a relative path ending with a slash, such as once/")
		}
	}
	creds := credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	if cfg.AccessKey == "" {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.FileAWSCredentials{},
			&credentials.IAM{},
		})
	}
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        creds,
		Secure:       u.Scheme == "https",
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    transport,
		MaxRetries:   maxRetries,
	})
	if err != nil {
		return nil, domain.Wrap(domain.CodeValidation, err, "S3 client cannot be configured")
	}
	return &Store{client: client, bucket: cfg.Bucket, prefix: cfg.Prefix}, nil
}

// Put stores data under key, replacing what is there.
//
// Errors: domain.CodeValidation for an invalid key, domain.CodeUnavailable
// when the store cannot be reached or refuses, or the context's error.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	name, err := s.name(ctx, key)
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(data), int64(len(data)), putOptions(data, contentType))
	return s.fail(ctx, err, "object cannot be stored")
}

// conditionalTries bounds the retries of a conditional write that the
// store answered with 409 ConditionalRequestConflict (another conditional
// write of the key in flight): one of them wins, so a few tries settle it.
const conditionalTries = 5

// PutIfAbsent stores data under key unless an object is there, and says
// whether it wrote. The store decides (If-None-Match: *), so concurrent
// calls from any process make one object.
//
// Errors: as Put.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte, contentType string) (bool, error) {
	name, err := s.name(ctx, key)
	if err != nil {
		return false, err
	}
	opts := putOptions(data, contentType)
	opts.SetMatchETagExcept("*")
	for range conditionalTries {
		_, err = s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(data), int64(len(data)), opts)
		if err == nil {
			return true, nil
		}
		resp := minio.ToErrorResponse(err)
		switch {
		case resp.StatusCode == http.StatusPreconditionFailed:
			return false, nil
		case resp.StatusCode == http.StatusConflict:
			// A concurrent conditional write: if it made the object, ours
			// is not needed; otherwise try again.
			if _, err := s.Stat(ctx, key); err == nil {
				return false, nil
			}
			continue
		}
		return false, s.fail(ctx, err, "object cannot be stored")
	}
	return false, s.fail(ctx, err, "object cannot be stored")
}

// Get returns the object.
//
// Errors: domain.CodeNotFound if there is none, domain.CodeValidation for an
// invalid key, domain.CodeUnavailable when the store cannot be reached or
// refuses, or the context's error.
func (s *Store) Get(ctx context.Context, key string) ([]byte, ports.ObjectInfo, error) {
	name, err := s.name(ctx, key)
	if err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, ports.ObjectInfo{}, s.fail(ctx, err, "object cannot be read")
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		return nil, ports.ObjectInfo{}, s.fail(ctx, err, "object cannot be read")
	}
	st, err := obj.Stat()
	if err != nil {
		return nil, ports.ObjectInfo{}, s.fail(ctx, err, "object cannot be read")
	}
	// The digest of what was read, not a stored one: the bytes are here.
	return data, objectstore.Describe(key, data, st.ContentType), nil
}

// Stat describes the object, its digest from the S3 checksum stored with
// it: none (SHA256 empty) for an object stored without a SHA-256
// checksum, which neither this adapter nor a direct upload it signed
// writes, so a client wrote it some other way; the caller decides (an
// upload's completion refuses it as not the registered content).
//
// Errors: as Get.
func (s *Store) Stat(ctx context.Context, key string) (ports.ObjectInfo, error) {
	name, err := s.name(ctx, key)
	if err != nil {
		return ports.ObjectInfo{}, err
	}
	st, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{Checksum: true})
	if err != nil {
		return ports.ObjectInfo{}, s.fail(ctx, err, "object cannot be described")
	}
	contentType := st.ContentType
	if contentType == "" {
		contentType = objectstore.DefaultContentType
	}
	info := ports.ObjectInfo{Key: key, Size: st.Size, ContentType: contentType}
	if digest, err := base64.StdEncoding.DecodeString(st.ChecksumSHA256); err == nil && len(digest) == sha256.Size {
		info.SHA256 = hex.EncodeToString(digest)
	}
	return info, nil
}

// Delete removes the object; S3 answers a delete of an absent object
// with success.
//
// Errors: domain.CodeValidation for an invalid key, domain.CodeUnavailable
// when the store cannot be reached or refuses, or the context's error.
func (s *Store) Delete(ctx context.Context, key string) error {
	name, err := s.name(ctx, key)
	if err != nil {
		return err
	}
	return s.fail(ctx, s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}), "object cannot be deleted")
}

// PresignPut signs a PUT of key that only the described content passes:
// the content type, the checksum and the content length are signed
// headers the client must send as given, and the store rejects a body
// whose SHA-256 is not the signed one. The length is signed because the
// checksum alone binds no size: a client that registered 1 byte with a
// large file's digest could otherwise put the large file, which would stay
// in the shared bucket until the upload expires.
//
// Errors: domain.CodeValidation for an invalid key or a digest that is not
// hex SHA-256; domain.CodeUnavailable when the credentials cannot be had.
func (s *Store) PresignPut(ctx context.Context, key string, want ports.ObjectInfo, ttl time.Duration) (ports.SignedRequest, error) {
	name, err := s.name(ctx, key)
	if err != nil {
		return ports.SignedRequest{}, err
	}
	digest, err := hex.DecodeString(want.SHA256)
	if err != nil || len(digest) != sha256.Size {
		return ports.SignedRequest{}, domain.Errorf(domain.CodeValidation, "sha256 must be 64 hex digits")
	}
	headers := http.Header{}
	headers.Set("Content-Type", want.ContentType)
	headers.Set("X-Amz-Checksum-Sha256", base64.StdEncoding.EncodeToString(digest))
	headers.Set("Content-Length", formatInt(want.Size))
	expires := time.Now().Add(ttl)
	u, err := s.client.PresignHeader(ctx, http.MethodPut, s.bucket, name, ttl, nil, headers)
	if err != nil {
		return ports.SignedRequest{}, s.fail(ctx, err, "upload cannot be signed")
	}
	out := make(map[string]string, len(headers))
	for k := range headers {
		out[k] = headers.Get(k)
	}
	return ports.SignedRequest{Method: http.MethodPut, URL: u.String(), Headers: out, ExpiresAt: expires}, nil
}

// PresignGet signs a GET of key.
//
// Errors: domain.CodeValidation for an invalid key; domain.CodeUnavailable
// when the credentials cannot be had.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (ports.SignedRequest, error) {
	name, err := s.name(ctx, key)
	if err != nil {
		return ports.SignedRequest{}, err
	}
	expires := time.Now().Add(ttl)
	u, err := s.client.PresignedGetObject(ctx, s.bucket, name, ttl, nil)
	if err != nil {
		return ports.SignedRequest{}, s.fail(ctx, err, "download cannot be signed")
	}
	return ports.SignedRequest{Method: http.MethodGet, URL: u.String(), ExpiresAt: expires}, nil
}

// name validates key and returns the S3 object name.
func (s *Store) name(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := objectstore.ValidateKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// putOptions writes data in one request with its SHA-256 checksum, which
// the store verifies and keeps for Stat.
func putOptions(data []byte, contentType string) minio.PutObjectOptions {
	if contentType == "" {
		contentType = objectstore.DefaultContentType
	}
	sum := sha256.Sum256(data)
	return minio.PutObjectOptions{
		ContentType:      contentType,
		DisableMultipart: true,
		UserMetadata:     map[string]string{"X-Amz-Checksum-Sha256": base64.StdEncoding.EncodeToString(sum[:])},
	}
}

// fail maps a client error: no such object is domain.CodeNotFound, the
// context's own end stays itself, anything else (network, refusal,
// missing bucket, credentials) is domain.CodeUnavailable. The message
// names no key or URL; the cause is kept for logs.
func (s *Store) fail(ctx context.Context, err error, message string) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return ctxErr
	}
	resp := minio.ToErrorResponse(err)
	if resp.Code == minio.NoSuchKey || (resp.StatusCode == http.StatusNotFound && resp.Code != minio.NoSuchBucket) {
		return domain.Errorf(domain.CodeNotFound, "object not found")
	}
	return domain.Wrap(domain.CodeUnavailable, err, message)
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
