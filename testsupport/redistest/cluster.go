package redistest

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterMasters is how many masters the cluster has; the hash slots are
// split evenly between them.
const clusterMasters = 3

// slots is how many hash slots a Redis Cluster has.
const slots = 16384

// clusterFormTimeout bounds the forming of the cluster (MEET, gossip,
// every node agreeing that every slot is served).
const clusterFormTimeout = 30 * time.Second

// ClusterTopology is a Redis Cluster of three masters and no replicas.
type ClusterTopology struct {
	// Addrs are the masters, host:port.
	Addrs []string
}

// URL is the cluster URL once reads (ONCE_REDIS_URL): the first master,
// the others as addr parameters.
func (c *ClusterTopology) URL() string {
	q := url.Values{}
	for _, a := range c.Addrs[1:] {
		q.Add("addr", a)
	}
	return "redis://" + c.Addrs[0] + "?" + q.Encode()
}

// SeedURL is the cluster URL with one seed, the first master: the client
// learns the others from it.
func (c *ClusterTopology) SeedURL() string { return "redis+cluster://" + c.Addrs[0] }

// NodeURL is a single-node URL of one master, the misconfiguration a
// cluster-unaware client makes: keys of the other masters' slots answer
// MOVED.
func (c *ClusterTopology) NodeURL() string { return "redis://" + c.Addrs[0] + "/0" }

// Elsewhere reports whether key's hash slot is served by another master
// than the first, which then answers MOVED for it through NodeURL.
func (c *ClusterTopology) Elsewhere(t testing.TB, key string) bool {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: c.Addrs[0]})
	defer client.Close()
	slot, err := client.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("redistest: CLUSTER KEYSLOT: %v", err)
	}
	return slot >= slots/clusterMasters // the first master serves the first third (form)
}

func startCluster() (*ClusterTopology, error) {
	dir, err := tempDir("once-redistest-cluster-*")
	if err != nil {
		return nil, err
	}
	nodes := make([]*server, clusterMasters)
	busPorts := make([]int, clusterMasters)
	for i := range nodes {
		nodes[i], err = startServer(2, func(ports []int) ([]string, error) {
			busPorts[i] = ports[1]
			return append(baseArgs(dir, ports[0]),
				"--cluster-enabled", "yes",
				"--cluster-config-file", fmt.Sprintf("%s/nodes-%d.conf", dir, ports[0]),
				"--cluster-port", strconv.Itoa(ports[1]),
				"--cluster-node-timeout", "5000",
			), nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := form(nodes, busPorts); err != nil {
		return nil, err
	}
	c := &ClusterTopology{}
	for _, n := range nodes {
		c.Addrs = append(c.Addrs, n.addr)
	}
	return c, nil
}

// form makes the nodes one cluster, as redis-cli --cluster create does:
// each master its share of the slots and its own config epoch, then MEET,
// then wait until every node sees every slot served.
func form(nodes []*server, busPorts []int) error {
	ctx, cancel := context.WithTimeout(context.Background(), clusterFormTimeout)
	defer cancel()
	for i, n := range nodes {
		c := n.client()
		lo, hi := i*slots/len(nodes), (i+1)*slots/len(nodes)-1
		err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err()
		if err == nil {
			err = c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err()
		}
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("node %s: %w", n.addr, err)
		}
	}
	first := nodes[0].client()
	defer first.Close()
	for i, n := range nodes[1:] {
		host, port, _ := strings.Cut(n.addr, ":")
		if err := first.Do(ctx, "CLUSTER", "MEET", host, port, busPorts[i+1]).Err(); err != nil {
			return fmt.Errorf("meet %s: %w", n.addr, err)
		}
	}
	for _, n := range nodes {
		c := n.client()
		err := waitFor(ctx, func() (bool, error) {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil {
				return false, err
			}
			return strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(nodes))) &&
				strings.Contains(info, fmt.Sprintf("cluster_slots_ok:%d", slots)), nil
		})
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("node %s did not join the cluster: %w", n.addr, err)
		}
	}
	return nil
}

// baseArgs are every server's settings: loopback only, no persistence,
// files in dir.
func baseArgs(dir string, port int) []string {
	return []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--loglevel", "warning",
	}
}

// waitFor polls cond until it holds, fails, or ctx ends.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
