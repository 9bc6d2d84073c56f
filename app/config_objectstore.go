package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/oncehq/once/adapters/objectstore/s3store"
)

// ObjectStoreConfig is where uploads, variants and transferred material
// go: memory, local or an S3 bucket; empty picks memory on the embedded
// store and local with PostgreSQL.
type ObjectStoreConfig struct {
	ObjectStore    string `env:"ONCE_OBJECT_STORE"`
	ObjectStoreDir string `env:"ONCE_OBJECT_STORE_DIR"`

	S3Endpoint  string        `env:"ONCE_S3_ENDPOINT"`
	S3Region    string        `env:"ONCE_S3_REGION"`
	S3Bucket    string        `env:"ONCE_S3_BUCKET"`
	S3PathStyle bool          `env:"ONCE_S3_PATH_STYLE"`
	S3Prefix    string        `env:"ONCE_S3_PREFIX"`
	S3URLTTL    time.Duration `env:"ONCE_S3_URL_TTL"`
}

// MaxS3URLTTL bounds a pre-signed URL's life: it is a bearer credential
// for one object, so it should not outlive the client's need by much.
const MaxS3URLTTL = time.Hour

func defaultObjectStoreConfig() ObjectStoreConfig {
	return ObjectStoreConfig{ObjectStoreDir: "var/objects", S3Region: "us-east-1", S3URLTTL: 15 * time.Minute}
}

// Object stores.
const (
	ObjectStoreMemory = "memory"
	ObjectStoreLocal  = "local"
	ObjectStoreS3     = "s3"
)

// store is the object store in use.
func (c ObjectStoreConfig) store(embedded bool) string {
	return orByStorage(c.ObjectStore, embedded, ObjectStoreMemory, ObjectStoreLocal)
}

// s3 is the S3 adapter's configuration. Credentials are not settings of
// ours: the adapter takes them from the usual AWS sources.
func (c ObjectStoreConfig) s3() s3store.Config {
	return s3store.Config{Endpoint: c.S3Endpoint, Region: c.S3Region, Bucket: c.S3Bucket, PathStyle: c.S3PathStyle, Prefix: c.S3Prefix}
}

// Validate checks the store and its settings.
func (c ObjectStoreConfig) Validate(embedded bool) error {
	switch c.store(embedded) {
	case ObjectStoreMemory:
		return nil
	case ObjectStoreLocal:
		if c.ObjectStoreDir == "" {
			return errors.New("ONCE_OBJECT_STORE_DIR is required with ONCE_OBJECT_STORE=local")
		}
		return nil
	case ObjectStoreS3:
		switch {
		case c.S3Endpoint == "":
			return errors.New("ONCE_S3_ENDPOINT is required with ONCE_OBJECT_STORE=s3")
		case c.S3Bucket == "":
			return errors.New("ONCE_S3_BUCKET is required with ONCE_OBJECT_STORE=s3")
		case c.S3Region == "":
			return errors.New("ONCE_S3_REGION must not be empty (stores without regions take any value, such as auto)")
		case c.S3URLTTL < time.Minute || c.S3URLTTL > MaxS3URLTTL:
			return fmt.Errorf("ONCE_S3_URL_TTL=%s must be between 1m and %s", c.S3URLTTL, MaxS3URLTTL)
		}
		if _, err := s3store.New(c.s3()); err != nil {
			return fmt.Errorf("ONCE_S3_ENDPOINT, ONCE_S3_BUCKET or ONCE_S3_PREFIX: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("ONCE_OBJECT_STORE=%q must be memory, local or s3", c.ObjectStore)
	}
}

func (ObjectStoreConfig) settings() settingGroup { return objectstoreSettings }

var objectstoreSettings = settingGroup{
	title: "Object store",
	vars: map[string]setting{
		"ONCE_OBJECT_STORE": {
			help:       "memory, local or s3; empty: memory on the embedded store, local with PostgreSQL",
			doc:        "where uploads, variants and transferred material go (`s3`: see [S3 object storage](deploy.md#s3-object-storage))",
			docDefault: "`memory` embedded, `local` with PostgreSQL",
		},
		"ONCE_OBJECT_STORE_DIR": {
			help: "directory of the local object store",
			doc:  "the directory of `ONCE_OBJECT_STORE=local`",
		},
		"ONCE_S3_ENDPOINT": {
			help: "URL of the S3-compatible store, such as https://s3.eu-central-1.amazonaws.com",
			doc:  "the URL of the S3-compatible store of `ONCE_OBJECT_STORE=s3` (scheme and host, no path); credentials come from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, the shared credentials file or the IAM role",
		},
		"ONCE_S3_REGION": {
			help: "region requests are signed for (auto for Cloudflare R2)",
		},
		"ONCE_S3_BUCKET": {
			help: "bucket of the S3 object store",
		},
		"ONCE_S3_PATH_STYLE": {
			help: "address the bucket in the path (MinIO, versitygw) rather than the host name",
		},
		"ONCE_S3_PREFIX": {
			help: "prefix of every object's name, ending in a slash, so deployments can share a bucket",
		},
		"ONCE_S3_URL_TTL": {
			help: "life of a pre-signed upload or download URL (1m to 1h)",
		},
	},
}
