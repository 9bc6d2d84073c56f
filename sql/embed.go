// Package schema holds the reviewed SQL migrations of once. They are applied
// in lexical file order by the PostgreSQL adapter (postgres.Migrate), each in
// its own transaction, as the schema owner role. The package is named
// schema, for what it holds, not sql after its directory, so that it never
// shadows database/sql; importers name it schema.
package schema

import "embed"

// FS holds every migration file (*.sql) of this directory.
//
//go:embed *.sql
var FS embed.FS
