package queue

import "github.com/oncehq/once/domain/scheduling"

// The slots' tests name the scheduling's figures as they did when they
// lived here.
const inMemoryPerDestination = scheduling.InMemoryPerDestination
