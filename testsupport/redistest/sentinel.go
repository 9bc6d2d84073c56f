package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the Sentinel monitors the primary under.
const MasterName = "once-primary"

// SentinelTopology is a primary, a replica of it and one Sentinel
// monitoring them (quorum 1), the smallest setup that fails over.
type SentinelTopology struct {
	// SentinelAddr is the Sentinel, host:port; Primary and Replica are the
	// data nodes as started (after a failover they trade places).
	SentinelAddr, Primary, Replica string
}

// URL is the Sentinel URL once reads (ONCE_REDIS_URL): the Sentinel's
// address, the master name and the database.
func (s *SentinelTopology) URL() string {
	return "redis+sentinel://" + s.SentinelAddr + "/0?master_name=" + MasterName
}

// Failover makes the Sentinel promote the replica and waits until it names
// the new primary, which it returns (host:port). Clients that ask the
// Sentinel follow; Primary and Replica keep the addresses as started.
func (s *SentinelTopology) Failover(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterFormTimeout)
	defer cancel()
	c := redis.NewSentinelClient(&redis.Options{Addr: s.SentinelAddr})
	defer c.Close()
	before, err := c.GetMasterAddrByName(ctx, MasterName).Result()
	if err != nil {
		t.Fatalf("redistest: the Sentinel's primary: %v", err)
	}
	if err := c.Failover(ctx, MasterName).Err(); err != nil {
		t.Fatalf("redistest: SENTINEL FAILOVER: %v", err)
	}
	var now []string
	err = waitFor(ctx, func() (bool, error) {
		now, err = c.GetMasterAddrByName(ctx, MasterName).Result()
		if err != nil || now[0]+":"+now[1] == before[0]+":"+before[1] {
			return false, err
		}
		// Promoted: it takes writes.
		node := redis.NewClient(&redis.Options{Addr: now[0] + ":" + now[1]})
		defer node.Close()
		role, err := node.Do(ctx, "ROLE").Slice()
		return err == nil && len(role) > 0 && role[0] == "master", err
	})
	if err != nil {
		t.Fatalf("redistest: the failover did not complete: %v", err)
	}
	return now[0] + ":" + now[1]
}

func startSentinel() (*SentinelTopology, error) {
	dir, err := tempDir("once-redistest-sentinel-*")
	if err != nil {
		return nil, err
	}
	primary, err := startServer(1, func(ports []int) ([]string, error) { return baseArgs(dir, ports[0]), nil })
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(primary.addr)
	replica, err := startServer(1, func(ports []int) ([]string, error) {
		return append(baseArgs(dir, ports[0]), "--replicaof", host, port), nil
	})
	if err != nil {
		return nil, err
	}
	sentinel, err := startServer(1, func(ports []int) ([]string, error) {
		// A Sentinel rewrites its configuration file: one per try.
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", ports[0]))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n"+
			"sentinel monitor %s %s %s 1\n"+
			"sentinel down-after-milliseconds %s 2000\n"+
			"sentinel failover-timeout %s 10000\n",
			ports[0], dir, MasterName, host, port, MasterName, MasterName)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		return []string{conf, "--sentinel", "--daemonize", "no", "--loglevel", "warning"}, nil
	})
	if err != nil {
		return nil, err
	}

	// Ready once the Sentinel names the primary and knows its replica.
	ctx, cancel := context.WithTimeout(context.Background(), clusterFormTimeout)
	defer cancel()
	c := sentinel.client()
	defer c.Close()
	err = waitFor(ctx, func() (bool, error) {
		addr, err := c.Do(ctx, "SENTINEL", "get-master-addr-by-name", MasterName).StringSlice()
		if err != nil || len(addr) != 2 || addr[0]+":"+addr[1] != primary.addr {
			return false, err
		}
		replicas, err := c.Do(ctx, "SENTINEL", "replicas", MasterName).Slice()
		return len(replicas) == 1, err
	})
	if err != nil {
		return nil, fmt.Errorf("the Sentinel did not take up the primary %s: %w", primary.addr, err)
	}
	return &SentinelTopology{SentinelAddr: sentinel.addr, Primary: primary.addr, Replica: replica.addr}, nil
}
