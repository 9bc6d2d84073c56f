package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/adapters/postgres"
	schema "github.com/oncehq/once/sql"
)

func migrateCmd() *cobra.Command {
	cmd := leafCommand("migrate", "Apply sql/*.sql as the owner role (ONCE_MIGRATE_DATABASE_URL)", func(cmd *cobra.Command) error {
		dsn := os.Getenv("ONCE_MIGRATE_DATABASE_URL")
		if dsn == "" {
			return errors.New("ONCE_MIGRATE_DATABASE_URL (the owner role's connection) is required")
		}
		// Migrations run one transaction at a time: one connection.
		db, err := postgres.OpenPool(cmd.Context(), dsn, postgres.Pool{MaxConns: 1, MaxIdle: 1})
		if err != nil {
			return err
		}
		defer db.Close()
		if err := postgres.Migrate(cmd.Context(), db, schema.FS); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
		return nil
	})
	cmd.Long = "Applies the embedded migrations in order, each once, recorded in schema_migrations.\n" +
		"Run it as the owner role, not as the application role the service uses."
	return cmd
}

// The variables `once bootstrap` reads the login roles' passwords from: an
// environment variable, never a flag, so no process list shows them.
const (
	ownerPasswordVar = "ONCE_BOOTSTRAP_OWNER_PASSWORD"
	appPasswordVar   = "ONCE_BOOTSTRAP_APP_PASSWORD"
)

func bootstrapCmd() *cobra.Command {
	var cfg postgres.BootstrapConfig
	var superuser string
	cmd := leafCommand("bootstrap", "Create the database and its roles (run once, as a PostgreSQL superuser)", func(cmd *cobra.Command) error {
		cfg.OwnerPassword, cfg.AppPassword = os.Getenv(ownerPasswordVar), os.Getenv(appPasswordVar)
		if err := postgres.Bootstrap(cmd.Context(), superuser, cfg); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "database %s ready: migrate as %s, serve as %s\n", cfg.Database, cfg.OwnerRole, cfg.AppRole)
		return nil
	})
	cmd.Long = "Creates the group roles once_app and once_discovery, the owner login role that runs\n" +
		"migrations, the application login role the service connects as (no BYPASSRLS, owns\n" +
		"nothing), and the database. Safe to run again.\n\n" +
		"The login roles get the passwords in " + ownerPasswordVar + " and " + appPasswordVar + "\n" +
		"when they are set (again on every run: a new one replaces the old; unset keeps a role's\n" +
		"password as it is). PostgreSQL receives a SCRAM-SHA-256 verifier, never the password.\n" +
		"Without them the roles have none: they log in only where pg_hba.conf trusts them or by\n" +
		"another method (peer, certificates)."
	cmd.Flags().StringVar(&superuser, "superuser-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "superuser connection")
	cmd.Flags().StringVar(&cfg.Database, "database", "once", "database to create")
	cmd.Flags().StringVar(&cfg.OwnerRole, "owner", "once_owner", "owner login role (runs migrations)")
	cmd.Flags().StringVar(&cfg.AppRole, "app", "once_service", "application login role (the service)")
	cmd.Flags().BoolVar(&cfg.AppNotDispatcher, "app-not-dispatcher", false,
		"do not let the application role discover due outbox work (run Dispatchers under another role)")
	return cmd
}
