package redisconn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/ports"
)

// Classify marks err as the broker's when it is: Misconfigured errors wrap
// ports.ErrBrokerMisconfigured, with a hint of what to change, and
// Unavailable ones ports.ErrBrokerUnreachable. Anything else (a script
// error, a bad argument) is returned as is: it may be the messages'.
func Classify(err error) error {
	switch {
	case err == nil || ports.BrokersFault(err):
		return err
	case Misconfigured(err):
		return fmt.Errorf("%w: %s: %w", ports.ErrBrokerMisconfigured, hint(err), err)
	case Unavailable(err):
		return fmt.Errorf("%w: %w", ports.ErrBrokerUnreachable, err)
	}
	return err
}

// Unavailable tells the errors by which Redis refuses every command for a
// while, whatever it is: it is loading, out of memory, read-only or
// without its master during a failover, its cluster is down, it has no
// connection to spare, or no Sentinel answers.
func Unavailable(err error) bool {
	return err != nil && (redis.IsLoadingError(err) || redis.IsOOMError(err) || redis.IsReadOnlyError(err) ||
		redis.IsMasterDownError(err) || redis.IsClusterDownError(err) || redis.IsTryAgainError(err) ||
		redis.IsMaxClientsError(err) || redis.IsNoReplicasError(err) ||
		errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed) ||
		strings.Contains(err.Error(), "all sentinels specified in configuration are unreachable"))
}

// Misconfigured tells the answers by which Redis says it is not what the
// URL claims, or not set up for once: every command would fail the same
// way until an operator changes the URL or Redis.
func Misconfigured(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := redis.IsMovedError(err); ok {
		return true
	}
	if _, ok := redis.IsAskError(err); ok {
		return true
	}
	return redis.IsAuthError(err) || redis.IsPermissionError(err) || unknownMaster(err) ||
		redis.HasErrorPrefix(err, "CROSSSLOT") || redis.HasErrorPrefix(err, "WRONGTYPE") ||
		redis.HasErrorPrefix(err, "MISCONF") || redis.HasErrorPrefix(err, "unknown command") ||
		redis.HasErrorPrefix(err, "This instance has cluster support disabled")
}

// unknownMaster is the Sentinels answering that they monitor no master of
// that name (every one of them answered nil).
func unknownMaster(err error) bool {
	return strings.Contains(err.Error(), "all sentinels specified in configuration are unreachable") && errors.Is(err, redis.Nil)
}

// hint says what a Misconfigured answer means and what to change.
func hint(err error) string {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	switch {
	case moved || ask:
		return "Redis is a Cluster node reached through a single-node URL: give the cluster's URL (redis+cluster://host:port)"
	case redis.HasErrorPrefix(err, "CROSSSLOT"):
		return "the keys of one queue are in several hash slots of a Redis Cluster: put a hash tag in the BullMQ prefix, e.g. {bull}"
	case redis.HasErrorPrefix(err, "This instance has cluster support disabled"):
		return "the URL names a Redis Cluster but Redis is a single node: give a redis:// URL"
	case unknownMaster(err):
		return "the Sentinels monitor no master of the URL's master_name"
	case redis.IsAuthError(err):
		return "Redis refused the credentials of the URL"
	case redis.IsPermissionError(err):
		return "the URL's Redis user lacks a permission once needs"
	case redis.HasErrorPrefix(err, "WRONGTYPE"):
		return "a key once writes holds another type of data: another application uses the key prefix"
	case redis.HasErrorPrefix(err, "unknown command") && strings.Contains(strings.ToLower(err.Error()), "sentinel"):
		return "the URL names Sentinels, but Redis there is not a Sentinel: give a redis:// URL"
	case redis.HasErrorPrefix(err, "MISCONF"):
		return "Redis refuses writes until its persistence is fixed"
	default:
		return "Redis does not support a command once needs"
	}
}
