// Package schema holds the reviewed SQL migrations of once. They are applied
// in lexical file order by the PostgreSQL adapter (postgres.Migrate), each in
// its own transaction, as the schema owner role.
package schema

import "embed"

// FS holds every migration file (*.sql) of this directory.
//
//go:embed *.sql
var FS embed.FS
