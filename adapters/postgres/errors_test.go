package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A constraint violation must not carry row values (the sealed credentials,
// or anything bun interpolated into the query) into the error.
func TestErrorsCarryNoRowValues(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(db.App)
	ws := newID(t)
	secret := "sealed-" + newID(t).String()
	s := model.Store{
		ID: newID(t), WorkspaceID: ws, Platform: "shopify", Name: "n", ExternalShopID: "shop-" + secret,
		Status: model.StoreVerified, CredentialVersion: 1, SealedCredentials: []byte(secret), CreatedAt: t0, UpdatedAt: t0,
	}
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Stores().Create(ctx, s) })

	dup := s
	dup.ID = newID(t)
	sameID := s // the same id, another shop: only the primary key conflicts
	sameID.ExternalShopID = "other-" + secret
	bad := s
	bad.ID = newID(t)
	bad.ExternalShopID = "other"
	bad.Status = "bogus"
	for name, c := range map[string]struct {
		store model.Store
		code  domain.Code
	}{
		"duplicate shop": {dup, domain.CodeStoreExists},
		"duplicate id":   {sameID, domain.CodeConflict},
		"check":          {bad, domain.CodeValidation},
	} {
		err := uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Stores().Create(ctx, c.store)
		})
		if !domain.IsCode(err, c.code) {
			t.Errorf("%s: want %s, got %v", name, c.code, err)
		}
		if text := fmt.Sprintf("%v %+v %#v", err, err, err); strings.Contains(text, secret) {
			t.Errorf("%s: error leaks row values: %s", name, text)
		}
	}
}

func TestTransactReportsUnavailableWhenTheDatabaseIsGone(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	app, err := postgres.Open(context.Background(), db.AppDSN)
	if err != nil {
		t.Fatal(err)
	}
	_ = app.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = postgres.NewUnitOfWork(app).Transact(ctx, newID(t), func(ctx context.Context, tx ports.Tx) error { return nil })
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != domain.CodeUnavailable || de.RetryAfter <= 0 {
		t.Fatalf("want UNAVAILABLE with a Retry-After, got %v", err)
	}
}

func TestPgtestIsolatesDatabases(t *testing.T) {
	t.Parallel()
	a, b := pgtest.New(t), pgtest.New(t)
	if a.Name == b.Name || a.AppRole == b.AppRole {
		t.Fatal("names collide")
	}
}
