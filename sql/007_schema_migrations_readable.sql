-- The readiness check (/readyz on the ops listener) compares the migrations
-- a binary embeds with the ones applied. It runs as the application role,
-- which may read the list of versions and nothing else of the table's owner.
GRANT SELECT ON schema_migrations TO once_app;
