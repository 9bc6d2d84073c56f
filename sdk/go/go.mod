module github.com/oncehq/once/sdk/go

go 1.23

require (
	github.com/cenkalti/backoff/v5 v5.0.3
	github.com/google/uuid v1.6.0
)
