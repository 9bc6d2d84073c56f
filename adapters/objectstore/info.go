package objectstore

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/oncehq/once/ports"
)

// DefaultContentType is recorded for objects stored without a content type.
const DefaultContentType = "application/octet-stream"

// Describe returns the ObjectInfo of data stored under key with
// contentType (DefaultContentType when empty).
func Describe(key string, data []byte, contentType string) ports.ObjectInfo {
	if contentType == "" {
		contentType = DefaultContentType
	}
	sum := sha256.Sum256(data)
	return ports.ObjectInfo{Key: key, Size: int64(len(data)), ContentType: contentType, SHA256: hex.EncodeToString(sum[:])}
}
