package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Roles, as a superuser would create them by hand (this is what Bootstrap
// does, race-safe and idempotent):
//
//	-- Cluster-wide group roles. Nobody logs in as them; login roles are
//	-- members. Created here, never by a migration: a migration runs as the
//	-- schema owner, which must not need CREATEROLE.
//	CREATE ROLE once_app NOLOGIN NOBYPASSRLS;
//	    -- what the service may do: SELECT/INSERT/UPDATE/DELETE on tenant
//	    -- tables and EXECUTE on discovery functions (granted by migrations).
//	    -- Owns nothing, so FORCE'd row-level security always applies.
//	CREATE ROLE once_discovery NOLOGIN NOBYPASSRLS;
//	    -- owns only the SECURITY DEFINER discovery functions (which return
//	    -- workspace ids or counts, never rows). It reads across workspaces
//	    -- through a policy of its own and column grants on the workspace
//	    -- id, status and due times of the two tables they read (migration
//	    -- 004), never through BYPASSRLS: no role of once has BYPASSRLS.
//	    -- (Before 004 it had BYPASSRLS; Bootstrap takes it away.)
//	CREATE ROLE once_dispatcher NOLOGIN NOBYPASSRLS;
//	    -- may EXECUTE the outbox discovery functions (which workspaces have
//	    -- due or old events, counts per status). Nothing else: the Dispatcher
//	    -- claims and marks events as once_app, under row-level security.
//
//	-- Per database:
//	CREATE ROLE <owner> LOGIN;            -- runs migrations, owns the schema
//	GRANT once_discovery TO <owner>;      -- so a migration can
//	                                      -- ALTER FUNCTION ... OWNER TO once_discovery
//	ALTER ROLE <owner> PASSWORD '<SCRAM-SHA-256 verifier>';
//	                                      -- when cfg.OwnerPassword is set
//	CREATE ROLE <app> LOGIN;              -- the service's connections
//	ALTER ROLE <app> PASSWORD '<SCRAM-SHA-256 verifier>';
//	                                      -- when cfg.AppPassword is set
//	GRANT once_app TO <app>;
//	GRANT once_dispatcher TO <app>;       -- unless cfg.AppNotDispatcher:
//	                                      -- `once serve` can run the
//	                                      -- Dispatcher in-process
//	ALTER ROLE <app> SET statement_timeout = '30s';
//	ALTER ROLE <app> SET idle_in_transaction_session_timeout = '60s';
//	    -- one long-open snapshot makes queue claims 20x slower
//	ALTER ROLE <app> SET plan_cache_mode = 'force_custom_plan';
//	    -- a generic plan made on an empty queue table stays slow once it fills
//	CREATE DATABASE <db> OWNER <owner>;
//	REVOKE ALL ON DATABASE <db> FROM PUBLIC;
//	GRANT CONNECT ON DATABASE <db> TO once_app;
//
// Role attributes (LOGIN, BYPASSRLS) are not inherited through membership;
// privileges and policies are, which is why the application role is never
// a member of once_discovery.

// Group role names. They are cluster-wide and shared by every database of
// once on the server.
const (
	AppGroupRole        = "once_app"
	DiscoveryGroupRole  = "once_discovery"
	DispatcherGroupRole = "once_dispatcher"
)

// BootstrapConfig names the database and the login roles Bootstrap creates.
type BootstrapConfig struct {
	Database  string
	OwnerRole string
	AppRole   string
	// OwnerPassword and AppPassword, when set, become the login roles'
	// passwords, on every run (so running again with a new one changes
	// it); empty leaves a role's password as it is (none for a new role,
	// which then logs in only where pg_hba.conf trusts it or by another
	// method: peer, certificates). The server receives a SCRAM-SHA-256
	// verifier, never the password.
	OwnerPassword string
	AppPassword   string
	// AppNotDispatcher keeps once_dispatcher from the app role (and revokes
	// it if an earlier bootstrap granted it), for deployments that run the
	// Dispatcher under a login role of its own; grant once_app and
	// once_dispatcher to that role outside Bootstrap.
	AppNotDispatcher bool
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// bootstrapLockKey serializes bootstraps that connect to the same database
// (pg_advisory_lock is per database). Bootstraps through different databases
// can still race; the duplicate_object / unique_violation handling covers
// that.
const bootstrapLockKey = 0x6f6e63655f626f6f // "once_boo"

// Bootstrap creates, as a superuser, the group roles, the owner and app login
// roles and the database of cfg. It is idempotent and safe to run
// concurrently (several test packages do).
func Bootstrap(ctx context.Context, superuserDSN string, cfg BootstrapConfig) error {
	for _, n := range []string{cfg.Database, cfg.OwnerRole, cfg.AppRole} {
		if !identifier.MatchString(n) {
			return fmt.Errorf("postgres: bootstrap: %q is not a plain lower-case identifier", n)
		}
	}
	if cfg.OwnerRole == cfg.AppRole {
		return errors.New("postgres: bootstrap: the owner and the app role must differ")
	}
	db, err := sql.Open("pgx", superuserDSN)
	if err != nil {
		return fmt.Errorf("postgres: bootstrap: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("postgres: bootstrap: connect: %w", err)
	}
	defer conn.Close()

	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(bootstrapLockKey)); err != nil {
		return fmt.Errorf("postgres: bootstrap: lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(bootstrapLockKey)) //nolint:errcheck // the session ends right after

	b := bootstrapper{conn: conn}
	steps := []func(context.Context) error{
		func(ctx context.Context) error {
			return b.role(ctx, AppGroupRole, roleAttrs{login: false, bypassRLS: false})
		},
		func(ctx context.Context) error {
			return b.role(ctx, DiscoveryGroupRole, roleAttrs{login: false, bypassRLS: false})
		},
		func(ctx context.Context) error {
			return b.role(ctx, DispatcherGroupRole, roleAttrs{login: false, bypassRLS: false})
		},
		func(ctx context.Context) error {
			return b.role(ctx, cfg.OwnerRole, roleAttrs{login: true, bypassRLS: false})
		},
		func(ctx context.Context) error { return b.password(ctx, cfg.OwnerRole, cfg.OwnerPassword) },
		func(ctx context.Context) error { return b.grantRole(ctx, DiscoveryGroupRole, cfg.OwnerRole) },
		func(ctx context.Context) error {
			return b.role(ctx, cfg.AppRole, roleAttrs{login: true, bypassRLS: false})
		},
		func(ctx context.Context) error { return b.password(ctx, cfg.AppRole, cfg.AppPassword) },
		func(ctx context.Context) error { return b.grantRole(ctx, AppGroupRole, cfg.AppRole) },
		func(ctx context.Context) error {
			if cfg.AppNotDispatcher {
				return b.revokeRole(ctx, DispatcherGroupRole, cfg.AppRole)
			}
			return b.grantRole(ctx, DispatcherGroupRole, cfg.AppRole)
		},
		func(ctx context.Context) error {
			app := quoteIdent(cfg.AppRole)
			for _, s := range []string{
				`ALTER ROLE ` + app + ` SET statement_timeout = '30s'`,
				`ALTER ROLE ` + app + ` SET idle_in_transaction_session_timeout = '60s'`,
				`ALTER ROLE ` + app + ` SET plan_cache_mode = 'force_custom_plan'`,
			} {
				if err := b.exec(ctx, s); err != nil {
					return err
				}
			}
			return nil
		},
		func(ctx context.Context) error { return b.database(ctx, cfg.Database, cfg.OwnerRole) },
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return fmt.Errorf("postgres: bootstrap: %w", err)
		}
	}
	return nil
}

type bootstrapper struct{ conn *sql.Conn }

type roleAttrs struct{ login, bypassRLS bool }

func (b bootstrapper) exec(ctx context.Context, stmt string, args ...any) error {
	_, err := b.conn.ExecContext(ctx, stmt, args...)
	return err
}

// role creates name with attrs, or, when it exists, corrects LOGIN and
// BYPASSRLS if they differ. It refuses superusers: RLS never applies to them.
func (b bootstrapper) role(ctx context.Context, name string, attrs roleAttrs) error {
	want := attrClause(attrs)
	err := b.exec(ctx, `CREATE ROLE `+quoteIdent(name)+` WITH `+want)
	if err == nil {
		return nil
	}
	if !alreadyExists(err) {
		return fmt.Errorf("create role %s: %w", name, err)
	}
	var super, login, bypass bool
	if err := b.conn.QueryRowContext(ctx,
		`SELECT rolsuper, rolcanlogin, rolbypassrls FROM pg_catalog.pg_roles WHERE rolname = $1`, name,
	).Scan(&super, &login, &bypass); err != nil {
		return fmt.Errorf("inspect role %s: %w", name, err)
	}
	if super {
		return fmt.Errorf("role %s is a superuser; refusing to use it", name)
	}
	if login == attrs.login && bypass == attrs.bypassRLS {
		return nil
	}
	if err := b.exec(ctx, `ALTER ROLE `+quoteIdent(name)+` WITH `+want); err != nil {
		return fmt.Errorf("alter role %s: %w", name, err)
	}
	return nil
}

// password sets role's password when one is given.
func (b bootstrapper) password(ctx context.Context, role, password string) error {
	if password == "" {
		return nil
	}
	return b.setPassword(ctx, role, password)
}

func attrClause(a roleAttrs) string {
	s := "NOLOGIN"
	if a.login {
		s = "LOGIN"
	}
	if a.bypassRLS {
		return s + " BYPASSRLS"
	}
	return s + " NOBYPASSRLS"
}

func (b bootstrapper) grantRole(ctx context.Context, group, member string) error {
	// Granting a membership that exists only raises a NOTICE.
	if err := b.exec(ctx, `GRANT `+quoteIdent(group)+` TO `+quoteIdent(member)); err != nil && !alreadyExists(err) {
		return fmt.Errorf("grant %s to %s: %w", group, member, err)
	}
	return nil
}

func (b bootstrapper) revokeRole(ctx context.Context, group, member string) error {
	// Revoking a membership that does not exist only raises a WARNING.
	if err := b.exec(ctx, `REVOKE `+quoteIdent(group)+` FROM `+quoteIdent(member)); err != nil {
		return fmt.Errorf("revoke %s from %s: %w", group, member, err)
	}
	return nil
}

func (b bootstrapper) database(ctx context.Context, name, owner string) error {
	var currentOwner string
	err := b.conn.QueryRowContext(ctx,
		`SELECT pg_catalog.pg_get_userbyid(datdba) FROM pg_catalog.pg_database WHERE datname = $1`, name,
	).Scan(&currentOwner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// CREATE DATABASE cannot run in a transaction; it is its own statement.
		if err := b.exec(ctx, `CREATE DATABASE `+quoteIdent(name)+` OWNER `+quoteIdent(owner)); err != nil && !alreadyExists(err) {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	case err != nil:
		return fmt.Errorf("inspect database %s: %w", name, err)
	case currentOwner != owner:
		if err := b.exec(ctx, `ALTER DATABASE `+quoteIdent(name)+` OWNER TO `+quoteIdent(owner)); err != nil {
			return fmt.Errorf("alter database %s: %w", name, err)
		}
	}
	// Only the service (and the owner) may connect; no TEMP for anyone else.
	if err := b.exec(ctx, `REVOKE ALL ON DATABASE `+quoteIdent(name)+` FROM PUBLIC`); err != nil {
		return fmt.Errorf("revoke database %s: %w", name, err)
	}
	if err := b.exec(ctx, `GRANT CONNECT ON DATABASE `+quoteIdent(name)+` TO `+quoteIdent(AppGroupRole)); err != nil {
		return fmt.Errorf("grant connect on %s: %w", name, err)
	}
	return nil
}

// alreadyExists reports the errors a concurrent or repeated bootstrap gets:
// duplicate_object / duplicate_database, or a unique_violation on the
// catalogs when two sessions create the same role at the same moment.
func alreadyExists(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "42710", "42P04", "23505":
		return true
	}
	return false
}

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }
