package bullmq

import (
	"errors"
	"strings"
)

// ErrNoHashTag is why New refuses a prefix and routes on a Redis Cluster
// whose queues would not each live in one hash slot.
var ErrNoHashTag = errors.New("on a Redis Cluster the keys of a BullMQ queue must share one hash slot: " +
	"put a hash tag in the prefix (e.g. {bull}), or in every queue name with a fallback queue for the other " +
	"event types (e.g. *={jobs}); the Node.js Queue and Worker use the same prefix and names")

// HashTagged reports whether every key of every queue the routes lead to
// (<prefix>:<queue>:<suffix>) falls in one hash slot per queue, as a Redis
// Cluster requires of the scripts that touch a queue's keys together
// (once's add script, and every BullMQ script): the prefix holds a hash
// tag, which puts every queue in one slot, or every queue name does, which
// spreads the queues over the masters. An event type routed to a queue
// named like it (no "*" fallback) carries no tag.
func HashTagged(prefix string, routes Routes) bool {
	if hashTag(prefix+":") != "" {
		return true
	}
	if routes.fallback == "" {
		return false
	}
	for _, q := range routes.QueuesOf() {
		if hashTag(prefix+":"+q+":") == "" {
			return false
		}
	}
	return true
}

// hashTag is the part of key that Redis Cluster hashes instead of the
// whole key: what lies between the first '{' and the first '}' after it,
// when that is not empty; "" when key has no such tag.
func hashTag(key string) string {
	_, rest, ok := strings.Cut(key, "{")
	if !ok {
		return ""
	}
	tag, _, ok := strings.Cut(rest, "}")
	if !ok {
		return ""
	}
	return tag
}
