package apikeys

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// UsedEvery is how often a key's LastUsedAt is written at most: once a
// minute per key and process (and about once a minute in all: the write
// skips a time that close to the one stored), never once per request.
const UsedEvery = time.Minute

// Authenticate turns an API key's secret into the principal it acts as:
// its workspace, its creator with the creator's role then, the key's id
// and its scopes. A key found valid is remembered for the cache's TTL
// (CacheOptions): a key revoked through another process is refused here
// within it, one revoked through this one at once.
//
// Errors: CodeUnauthenticated for a malformed, unknown, wrong or revoked
// key (the message says which of "revoked" and "not valid");
// CodeUnavailable when the database cannot be read now or the request
// ended meanwhile.
func (s *Service) Authenticate(ctx context.Context, secret string) (model.Principal, error) {
	lookup, ok := parseSecret(secret)
	if !ok {
		return model.Principal{}, notValid()
	}
	now := s.clock.Now()
	if c, ok := s.cache.get(lookup, now); ok {
		if !s.hasher.matches(c.key.HashKeyID, c.key.Hash, secret) {
			return model.Principal{}, notValid()
		}
		s.markUsed(ctx, c.key, secret, now)
		return principalOf(c.key), nil
	}
	gen := s.cache.snapshot()
	// The read remembers the key it found (live, whichever secret came
	// with it: a hit checks the secret again) before its callers go on,
	// so a request that comes after it finds the key in the cache rather
	// than reading again.
	k, err := s.verifying.read(ctx, lookup, gen, func(ctx context.Context) (model.APIKey, error) {
		if c, ok := s.cache.get(lookup, now); ok { // put by a read that just ended
			return c.key, nil
		}
		k, err := s.read(ctx, lookup)
		if err == nil && !k.Revoked() {
			s.cache.put(gen, k, now)
		}
		return k, err
	})
	if err != nil {
		return model.Principal{}, err
	}
	if !s.hasher.matches(k.HashKeyID, k.Hash, secret) {
		return model.Principal{}, notValid()
	}
	if k.Revoked() {
		return model.Principal{}, domain.Errorf(domain.CodeUnauthenticated, "this API key was revoked")
	}
	s.markUsed(ctx, k, secret, now)
	return principalOf(k), nil
}

func notValid() error {
	return domain.Errorf(domain.CodeUnauthenticated, "the API key is not valid")
}

// principalOf is the principal k acts as; its scopes are a copy, the
// cached key's own being shared by every request that finds it.
func principalOf(k model.APIKey) model.Principal {
	return model.Principal{WorkspaceID: k.WorkspaceID, UserID: k.CreatedBy, Role: k.Role, APIKeyID: k.ID, Scopes: slices.Clone(k.Scopes)}
}

// read finds the key with lookup: its workspace through the directory,
// then the row under that workspace's row-level security. An unknown
// lookup id is CodeUnauthenticated.
func (s *Service) read(ctx context.Context, lookup string) (model.APIKey, error) {
	ws, err := s.directory.WorkspaceOf(ctx, lookup)
	if err == nil {
		var k model.APIKey
		k, err = ports.Query(ctx, s.uow, ws, func(ctx context.Context, tx ports.Tx) (model.APIKey, error) {
			return repo(tx).ByLookupID(ctx, lookup)
		})
		if err == nil {
			return k, nil
		}
	}
	if domain.IsCode(err, domain.CodeNotFound) {
		return model.APIKey{}, notValid()
	}
	return model.APIKey{}, err
}

// markUsed writes now as k's LastUsedAt when the last one this process
// knows of is UsedEvery old, and moves a key hashed under an older
// keyring key to the current one in the same write. A failure is logged
// and the request goes on: the time is a hint for the admins.
func (s *Service) markUsed(ctx context.Context, k model.APIKey, secret string, now time.Time) {
	if s.cache != nil {
		if !s.cache.claimUse(k.LookupID, now) {
			return
		}
	} else if now.Sub(k.LastUsedAt) < UsedEvery {
		return
	}
	var hashKeyID string
	var sum []byte
	if k.HashKeyID != s.hasher.CurrentKeyID() {
		hashKeyID, sum = s.hasher.hash(secret)
	}
	err := s.uow.Transact(ctx, k.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return repo(tx).MarkUsed(ctx, k.ID, now, UsedEvery, hashKeyID, sum)
	})
	if err != nil {
		s.log.WarnContext(ctx, "the last use of an API key was not recorded", slog.String("component", "apikeys"),
			slog.String("api_key_id", k.ID.String()), slog.Any("error", err))
	}
}
