package bullmq

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxPriority is the highest BullMQ priority (2^21 - 1). 1 is the most
// urgent; 0 means "no priority": the job goes to the plain FIFO list.
const MaxPriority = 1<<21 - 1

// Routes says which BullMQ queue each event type goes to, and at which
// priority. By default an event type's queue is named like the event type
// ("store.credentials.verify"), so a Node.js worker subscribes to the event
// types it handles; ParseRoutes overrides that per type, or for all other
// types with "*".
type Routes struct {
	queues     map[string]string // event type -> queue
	fallback   string            // the "*" queue; "" means "named like the type"
	priorities map[string]int    // event type -> priority
}

// ParseRoutes reads the mapping settings:
//
//	queues:     "store.credentials.verify=stores,media.process=media,*=jobs"
//	priorities: "store.credentials.verify=1,catalog.sync=10"
//
// Both are comma-separated type=value pairs and may be empty. Queue names
// cannot hold ':' (it separates the parts of BullMQ's keys) or spaces;
// priorities are 0..MaxPriority.
func ParseRoutes(queues, priorities string) (Routes, error) {
	r := Routes{queues: map[string]string{}, priorities: map[string]int{}}
	qs, err := pairs(queues)
	if err != nil {
		return Routes{}, fmt.Errorf("queues: %w", err)
	}
	for eventType, queue := range qs {
		if err := checkQueueName(queue); err != nil {
			return Routes{}, fmt.Errorf("queues: %s: %w", eventType, err)
		}
		if eventType == "*" {
			r.fallback = queue
			continue
		}
		r.queues[eventType] = queue
	}
	ps, err := pairs(priorities)
	if err != nil {
		return Routes{}, fmt.Errorf("priorities: %w", err)
	}
	for eventType, v := range ps {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > MaxPriority {
			return Routes{}, fmt.Errorf("priorities: %s=%q is not a priority between 0 and %d", eventType, v, MaxPriority)
		}
		r.priorities[eventType] = p
	}
	return r, nil
}

// Queue is the queue the jobs of eventType go to.
func (r Routes) Queue(eventType string) string {
	if q, ok := r.queues[eventType]; ok {
		return q
	}
	if r.fallback != "" {
		return r.fallback
	}
	return eventType
}

// Names reports whether the mapping names eventType itself (a queue or a
// priority of its own; "*" names no type).
func (r Routes) Names(eventType string) bool {
	_, queue := r.queues[eventType]
	_, priority := r.priorities[eventType]
	return queue || priority
}

// Priority is the BullMQ priority of eventType's jobs (0: none).
func (r Routes) Priority(eventType string) int { return r.priorities[eventType] }

// QueuesOf lists, sorted and once each, the queues eventTypes go to, and
// every queue named in the mapping.
func (r Routes) QueuesOf(eventTypes ...string) []string {
	set := map[string]bool{}
	for _, t := range eventTypes {
		set[r.Queue(t)] = true
	}
	for _, q := range r.queues {
		set[q] = true
	}
	if r.fallback != "" {
		set[r.fallback] = true
	}
	out := make([]string, 0, len(set))
	for q := range set {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

// checkQueueName refuses names BullMQ cannot use as a queue name; an event
// type that is not a valid name has to be mapped.
func checkQueueName(name string) error {
	if name == "" || strings.ContainsAny(name, ": \t\r\n") {
		return fmt.Errorf("queue name %q is empty or holds ':' or white space", name)
	}
	return nil
}

// pairs reads "k=v,k=v"; keys must be unique.
func pairs(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not event.type=value", item)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}
