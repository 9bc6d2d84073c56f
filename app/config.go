// Package app assembles once with fx: configuration, the adapter modules
// chosen from it, and the lifecycle of the servers and background jobs.
package app

import (
	"errors"
	"fmt"

	"github.com/caarlos0/env/v11"
	"go.uber.org/fx"
)

// Config is read from the environment. It is made of one group per
// concern, each in its own file (config_<group>.go) with its variables,
// their defaults, their help and its Validate; the table of
// docs/configuration.md is generated from those declarations
// (`once config --markdown`). Constructors take their group, which
// supplyGroups gives the application, so a signature says which settings
// it reads.
type Config struct {
	HTTPConfig
	OpsConfig
	DatabaseConfig
	SecretsConfig
	IdempotencyConfig
	FetchConfig
	ObjectStoreConfig
	LimitsConfig
	RetentionConfig
	QueueConfig
	BullMQConfig
	ProcessConfig
	DispatchConfig
	RelayConfig
	WorkerConfig
	ShutdownConfig
	LoggingConfig
}

// DefaultConfig is the configuration of an empty environment, before the dev
// defaults: what tests start from, and what parsing the environment starts
// from (a variable that is unset keeps its default).
func DefaultConfig() Config {
	return Config{
		HTTPConfig:        defaultHTTPConfig(),
		OpsConfig:         OpsConfig{},
		DatabaseConfig:    defaultDatabaseConfig(),
		SecretsConfig:     defaultSecretsConfig(),
		IdempotencyConfig: defaultIdempotencyConfig(),
		FetchConfig:       FetchConfig{},
		ObjectStoreConfig: defaultObjectStoreConfig(),
		LimitsConfig:      defaultLimitsConfig(),
		RetentionConfig:   defaultRetentionConfig(),
		QueueConfig:       defaultQueueConfig(),
		BullMQConfig:      defaultBullMQConfig(),
		ProcessConfig:     defaultProcessConfig(),
		DispatchConfig:    defaultDispatchConfig(),
		RelayConfig:       defaultRelayConfig(),
		WorkerConfig:      defaultWorkerConfig(),
		ShutdownConfig:    defaultShutdownConfig(),
		LoggingConfig:     defaultLoggingConfig(),
	}
}

// supplyGroups gives the application each group of c, and not c itself:
// a constructor asks for the groups it reads.
func supplyGroups(c Config) fx.Option {
	return fx.Supply(
		c.HTTPConfig, c.OpsConfig, c.DatabaseConfig, c.SecretsConfig, c.IdempotencyConfig, c.FetchConfig,
		c.ObjectStoreConfig, c.LimitsConfig, c.RetentionConfig, c.QueueConfig, c.BullMQConfig, c.ProcessConfig,
		c.DispatchConfig, c.RelayConfig, c.WorkerConfig, c.ShutdownConfig, c.LoggingConfig,
	)
}

// LoadConfig reads the environment, fills the dev defaults on the embedded
// store, and validates.
func LoadConfig() (Config, error) {
	c, err := ReadConfig()
	if err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// LoadBackgroundConfig is LoadConfig for a process that serves no API
// (once dispatch, once work): it verifies no token, so it needs no token
// setting, and a worker, which calls URLs tenants choose, holds no secret
// that could forge one.
func LoadBackgroundConfig() (Config, error) {
	c, err := ReadConfig()
	if err != nil {
		return Config{}, err
	}
	return c, c.validate(false)
}

// ReadConfig is LoadConfig without the validation, for `once config`,
// which shows an invalid configuration too.
func ReadConfig() (Config, error) {
	c := DefaultConfig()
	if err := env.Parse(&c); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", explainEnvError(err))
	}
	c.applyDevDefaults()
	return c, nil
}

// Validate says everything that is wrong at once, naming the variables:
// each group checks its own, given what it needs of the others.
func (c Config) Validate() error { return c.validate(true) }

// validate is Validate, the token settings required when verifiesTokens.
func (c Config) validate(verifiesTokens bool) error {
	return errors.Join(
		c.SecretsConfig.Validate(c.Embedded(), verifiesTokens),
		c.IdempotencyConfig.Validate(),
		c.DatabaseConfig.Validate(),
		c.HTTPConfig.Validate(),
		c.RetentionConfig.Validate(c.IdempotencyRetention),
		c.ObjectStoreConfig.Validate(c.Embedded()),
		c.QueueConfig.Validate(c.BullMQConfig, c.DispatchLease),
		c.DispatchConfig.Validate(),
		c.WorkerConfig.Validate(),
		c.RelayConfig.Validate(),
		c.ShutdownConfig.Validate(),
		c.LoggingConfig.Validate(),
		c.OpsConfig.Validate(c.OperatorToken),
		c.FetchConfig.Validate(),
		c.LimitsConfig.Validate(c.Embedded(), c.RedisURL),
	)
}

// orByStorage is set, or, when it is empty, the choice of the storage in
// use: embedded on the embedded store, postgres with DATABASE_URL.
func orByStorage(set string, embedded bool, onEmbedded, onPostgres string) string {
	switch {
	case set != "":
		return set
	case embedded:
		return onEmbedded
	default:
		return onPostgres
	}
}
