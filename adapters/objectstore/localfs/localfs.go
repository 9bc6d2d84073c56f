// Package localfs implements ports.ObjectStore on a directory of the local
// file system, for single-machine deployments and development.
//
// Layout: the object under key "a/b/c" is the file <root>/a/b/c, and its
// metadata (content type, size, SHA-256) is the JSON sidecar <root>/a/b/.c.meta.
// Keys never have a segment starting with "." (objectstore.ValidateKey), so
// sidecars and temporary files cannot collide with an object. (A sidecar
// named "<key>.meta" could: it would be the object of key "a/b/c.meta".)
//
// Writes are atomic: content goes to a temporary file in the target
// directory, is synced, and is then renamed (Put) or hard-linked (PutIfAbsent)
// into place. A hard link fails if the name exists, so concurrent
// PutIfAbsent calls, even from several processes sharing the root, make one
// object. Within a process a per-key lock also keeps an object and its
// sidecar in step; a crash between the two leaves the object with a missing
// or stale sidecar (older than the object), which reads detect and answer
// by hashing the content.
package localfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/oncehq/once/adapters/objectstore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

var _ ports.ObjectStore = (*Store)(nil)

// Store is an object store rooted at a directory.
type Store struct {
	root  string
	locks [64]sync.Mutex
}

// sidecar is the JSON kept next to each object.
type sidecar struct {
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`

	modTime time.Time
}

// New returns a store rooted at root, creating the directory if needed.
//
// Errors: domain.CodeValidation if root is empty, domain.CodeUnavailable if
// the directory cannot be created or is not a directory.
func New(root string) (*Store, error) {
	if root == "" {
		return nil, domain.Errorf(domain.CodeValidation, "object store root must not be empty")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, domain.Wrap(domain.CodeValidation, err, "object store root is not a usable path")
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, domain.Wrap(domain.CodeUnavailable, err, "object store root cannot be created")
	}
	return &Store{root: abs}, nil
}

// Put stores data under key, replacing what is there.
//
// Errors: domain.CodeValidation for an invalid key, domain.CodeConflict if
// key is a prefix of another object's key or the other way round (the file
// system cannot hold both "a" and "a/b"), domain.CodeUnavailable when the
// file system fails, or the context's error.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	final, meta, err := s.paths(ctx, key)
	if err != nil {
		return err
	}
	mu := s.lock(key)
	mu.Lock()
	defer mu.Unlock()
	if fi, err := os.Lstat(final); err == nil && !fi.Mode().IsRegular() {
		return prefixConflict()
	}
	tmp, err := s.writeTemp(final, data)
	if err != nil {
		return err
	}
	defer removeQuietly(tmp)
	if err := os.Rename(tmp, final); err != nil {
		return unavailable(err, "object cannot be stored")
	}
	return s.writeSidecar(meta, objectstore.Describe(key, data, contentType))
}

// PutIfAbsent stores data under key unless an object is there, and says
// whether it wrote. Concurrent calls for one key make one object.
//
// Errors: as Put. created is true alongside an error when the object was
// stored but its sidecar was not (reads then describe it from the content).
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte, contentType string) (bool, error) {
	final, meta, err := s.paths(ctx, key)
	if err != nil {
		return false, err
	}
	mu := s.lock(key)
	mu.Lock()
	defer mu.Unlock()
	if fi, err := os.Lstat(final); err == nil {
		if !fi.Mode().IsRegular() {
			return false, prefixConflict()
		}
		return false, nil
	}
	tmp, err := s.writeTemp(final, data)
	if err != nil {
		return false, err
	}
	defer removeQuietly(tmp)
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, unavailable(err, "object cannot be stored")
	}
	// The object exists from here on; a crash before the sidecar is written
	// is repaired by reads (see the package comment).
	if err := s.writeSidecar(meta, objectstore.Describe(key, data, contentType)); err != nil {
		return true, err
	}
	return true, nil
}

// Get returns the object.
//
// Errors: domain.CodeNotFound if there is none, domain.CodeValidation for an
// invalid key, domain.CodeUnavailable when the file system fails, or the
// context's error.
func (s *Store) Get(ctx context.Context, key string) ([]byte, ports.ObjectInfo, error) {
	final, meta, err := s.paths(ctx, key)
	if err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	mu := s.lock(key)
	mu.Lock()
	defer mu.Unlock()
	data, err := os.ReadFile(final)
	if err != nil {
		return nil, ports.ObjectInfo{}, readError(err)
	}
	info := objectstore.Describe(key, data, "")
	if sc, ok := readSidecar(meta); ok && sc.SHA256 == info.SHA256 && sc.ContentType != "" {
		info.ContentType = sc.ContentType
	}
	return data, info, nil
}

// Stat describes the object.
//
// Errors: as Get.
func (s *Store) Stat(ctx context.Context, key string) (ports.ObjectInfo, error) {
	final, meta, err := s.paths(ctx, key)
	if err != nil {
		return ports.ObjectInfo{}, err
	}
	mu := s.lock(key)
	mu.Lock()
	defer mu.Unlock()
	fi, err := os.Stat(final)
	if err != nil {
		return ports.ObjectInfo{}, readError(err)
	}
	if !fi.Mode().IsRegular() {
		return ports.ObjectInfo{}, notFound()
	}
	if sc, ok := readSidecar(meta); ok && sc.Size == fi.Size() && sc.SHA256 != "" && !sc.modTime.Before(fi.ModTime()) {
		return ports.ObjectInfo{Key: key, Size: sc.Size, ContentType: sc.ContentType, SHA256: sc.SHA256}, nil
	}
	// No sidecar, or one from another version of the object: hash the
	// content rather than report wrong metadata.
	f, err := os.Open(final)
	if err != nil {
		return ports.ObjectInfo{}, readError(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return ports.ObjectInfo{}, unavailable(err, "object cannot be read")
	}
	return ports.ObjectInfo{Key: key, Size: n, ContentType: objectstore.DefaultContentType, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Delete removes the object and its sidecar; an absent object is no
// error. Directories left empty stay: they are cheap, and removing them
// would race with a concurrent write below them.
//
// Errors: domain.CodeValidation for an invalid key, domain.CodeUnavailable
// when the file system fails, or the context's error.
func (s *Store) Delete(ctx context.Context, key string) error {
	final, meta, err := s.paths(ctx, key)
	if err != nil {
		return err
	}
	mu := s.lock(key)
	mu.Lock()
	defer mu.Unlock()
	if fi, err := os.Lstat(final); err == nil && !fi.Mode().IsRegular() {
		return nil // a directory of other objects' keys, not an object
	}
	// The object first: a sidecar without its object is ignored by reads.
	for _, name := range []string{final, meta} {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return unavailable(err, "object cannot be deleted")
		}
	}
	return nil
}

// paths validates key and returns the object's and the sidecar's paths.
func (s *Store) paths(ctx context.Context, key string) (final, meta string, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	if err := objectstore.ValidateKey(key); err != nil {
		return "", "", err
	}
	dir, base := path.Split(key)
	final = filepath.Join(s.root, filepath.FromSlash(key))
	meta = filepath.Join(s.root, filepath.FromSlash(dir), "."+base+".meta")
	return final, meta, nil
}

// lock returns the in-process lock of key's stripe.
func (s *Store) lock(key string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return &s.locks[h.Sum32()%uint32(len(s.locks))]
}

// writeTemp writes data, synced, to a new temporary file in final's
// directory (so a rename or link into place stays on one file system) and
// returns its path.
func (s *Store) writeTemp(final string, data []byte) (string, error) {
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
			return "", prefixConflict()
		}
		return "", unavailable(err, "object directory cannot be created")
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", unavailable(err, "object cannot be written")
	}
	name := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		removeQuietly(name)
		return "", unavailable(werr, "object cannot be written")
	}
	return name, nil
}

// writeSidecar replaces the sidecar at meta atomically.
func (s *Store) writeSidecar(meta string, info ports.ObjectInfo) error {
	raw, err := json.Marshal(sidecar{ContentType: info.ContentType, Size: info.Size, SHA256: info.SHA256})
	if err != nil {
		return domain.Wrap(domain.CodeInternal, err, "object metadata cannot be encoded")
	}
	tmp, err := s.writeTemp(meta, raw)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, meta); err != nil {
		removeQuietly(tmp)
		return unavailable(err, "object metadata cannot be stored")
	}
	return nil
}

func readSidecar(meta string) (sidecar, bool) {
	fi, err := os.Stat(meta)
	if err != nil {
		return sidecar{}, false
	}
	raw, err := os.ReadFile(meta)
	if err != nil {
		return sidecar{}, false
	}
	var sc sidecar
	if err := json.Unmarshal(raw, &sc); err != nil {
		return sidecar{}, false
	}
	sc.modTime = fi.ModTime()
	return sc, true
}

// readError maps a failed read of an object: a missing file, or a path
// through or onto something that is not an object, is "not found".
func readError(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
		return notFound()
	}
	return unavailable(err, "object cannot be read")
}

// prefixConflict is a key that is a prefix of another object's key, or has
// one as its prefix: a file system cannot hold both "a" and "a/b".
func prefixConflict() error {
	return domain.Errorf(domain.CodeConflict, "object key conflicts with the path of another object")
}

func notFound() error { return domain.Errorf(domain.CodeNotFound, "object not found") }

// unavailable wraps a file-system failure. The cause (with the path) is
// kept for logs; the message names no key.
func unavailable(err error, message string) error {
	return domain.Wrap(domain.CodeUnavailable, err, message)
}

func removeQuietly(name string) { _ = os.Remove(name) }
