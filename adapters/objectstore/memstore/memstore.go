// Package memstore implements ports.ObjectStore in process memory. Besides
// storing objects it records every write, so tests can count side effects
// ("each variant was written once"), and it can be told to fail, so tests
// can play an unavailable storage.
package memstore

import (
	"context"
	"slices"
	"sync"

	"github.com/oncehq/once/adapters/objectstore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

var _ ports.ObjectStore = (*Store)(nil)

// Op names an ObjectStore method, for failure injection.
type Op string

const (
	OpPut         Op = "Put"
	OpPutIfAbsent Op = "PutIfAbsent"
	OpGet         Op = "Get"
	OpStat        Op = "Stat"
	OpDelete      Op = "Delete"
)

// Store is an object store in a map. The zero value is not usable; call New.
type Store struct {
	mu      sync.Mutex
	objects map[string]object
	writes  map[string]int
	fail    func(op Op, key string) error
}

type object struct {
	data []byte
	info ports.ObjectInfo
}

// New returns an empty store.
func New() *Store {
	return &Store{objects: map[string]object{}, writes: map[string]int{}}
}

// Put stores a copy of data under key, replacing what is there.
//
// Errors: domain.CodeValidation for an invalid key (see
// objectstore.ValidateKey), or what an injected failure returns.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := s.check(ctx, OpPut, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeLocked(key, data, contentType)
	return nil
}

// PutIfAbsent stores a copy of data under key unless an object is there;
// created says whether it wrote. Concurrent calls for one key make one
// object.
//
// Errors: as Put.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte, contentType string) (bool, error) {
	if err := s.check(ctx, OpPutIfAbsent, key); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok {
		return false, nil
	}
	s.storeLocked(key, data, contentType)
	return true, nil
}

// Get returns a copy of the object.
//
// Errors: domain.CodeNotFound if there is none, domain.CodeValidation for an
// invalid key, or what an injected failure returns.
func (s *Store) Get(ctx context.Context, key string) ([]byte, ports.ObjectInfo, error) {
	if err := s.check(ctx, OpGet, key); err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[key]
	if !ok {
		return nil, ports.ObjectInfo{}, notFound()
	}
	return slices.Clone(o.data), o.info, nil
}

// Stat describes the object.
//
// Errors: as Get.
func (s *Store) Stat(ctx context.Context, key string) (ports.ObjectInfo, error) {
	if err := s.check(ctx, OpStat, key); err != nil {
		return ports.ObjectInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[key]
	if !ok {
		return ports.ObjectInfo{}, notFound()
	}
	return o.info, nil
}

// Delete removes the object; an absent one is no error.
//
// Errors: domain.CodeValidation for an invalid key, or what an injected
// failure returns.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.check(ctx, OpDelete, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, key)
	return nil
}

// Writes counts the writes that stored bytes under key: every Put, and
// every PutIfAbsent that created the object.
func (s *Store) Writes(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[key]
}

// Keys lists the stored keys in order.
func (s *Store) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.objects))
	for k := range s.objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// FailWith makes every later call ask fail first: a non-nil error is
// returned instead of doing the call (use domain.CodeUnavailable to play an
// outage). nil restores normal service.
func (s *Store) FailWith(fail func(op Op, key string) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fail
}

func (s *Store) check(ctx context.Context, op Op, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := objectstore.ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail(op, key)
	}
	return nil
}

func (s *Store) storeLocked(key string, data []byte, contentType string) {
	s.objects[key] = object{data: slices.Clone(data), info: objectstore.Describe(key, data, contentType)}
	s.writes[key]++
}

func notFound() error {
	return domain.Errorf(domain.CodeNotFound, "object not found")
}
