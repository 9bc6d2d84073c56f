package app

import (
	"errors"
	"fmt"
)

// ObjectStoreConfig is where uploads, variants and transferred material
// go: memory or local; empty picks memory on the embedded store and local
// with PostgreSQL.
type ObjectStoreConfig struct {
	ObjectStore    string `env:"ONCE_OBJECT_STORE"`
	ObjectStoreDir string `env:"ONCE_OBJECT_STORE_DIR"`
}

func defaultObjectStoreConfig() ObjectStoreConfig {
	return ObjectStoreConfig{ObjectStoreDir: "var/objects"}
}

// Object stores.
const (
	ObjectStoreMemory = "memory"
	ObjectStoreLocal  = "local"
)

// store is the object store in use.
func (c ObjectStoreConfig) store(embedded bool) string {
	return orByStorage(c.ObjectStore, embedded, ObjectStoreMemory, ObjectStoreLocal)
}

// Validate checks the store and its directory.
func (c ObjectStoreConfig) Validate(embedded bool) error {
	switch c.store(embedded) {
	case ObjectStoreMemory:
		return nil
	case ObjectStoreLocal:
		if c.ObjectStoreDir == "" {
			return errors.New("ONCE_OBJECT_STORE_DIR is required with ONCE_OBJECT_STORE=local")
		}
		return nil
	default:
		return fmt.Errorf("ONCE_OBJECT_STORE=%q must be memory or local", c.ObjectStore)
	}
}

func (ObjectStoreConfig) settings() settingGroup { return objectstoreSettings }

var objectstoreSettings = settingGroup{
	title: "Object store",
	vars: map[string]setting{
		"ONCE_OBJECT_STORE": {
			help:       "memory or local; empty: memory on the embedded store, local with PostgreSQL",
			doc:        "where uploads, variants and transferred material go",
			docDefault: "`memory` embedded, `local` with PostgreSQL",
		},
		"ONCE_OBJECT_STORE_DIR": {
			help: "directory of the local object store",
			doc:  "the directory of `ONCE_OBJECT_STORE=local`",
		},
	},
}
