package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killTree kills pid and its children with SIGKILL. It stops pid first
// (SIGSTOP), so that it forks nothing and reaps nothing while its children
// are found and killed, then kills it, and waits until all are gone.
func killTree(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("stop %d: %w", pid, err)
	}
	children, err := childrenOf(pid)
	if err != nil {
		return err
	}
	for _, c := range children {
		_ = syscall.Kill(c, syscall.SIGKILL)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %d: %w", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range append(children, pid) {
		for alive(p) {
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d did not die", p)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// childrenOf lists the processes whose parent is pid (Linux /proc).
func childrenOf(pid int) ([]int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		if ppid, ok := parentIn(string(raw)); ok && ppid == pid {
			p, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, p)
		}
	}
	if len(stats) == 0 {
		return nil, errors.New("no /proc: killing a server's processes needs Linux")
	}
	return out, nil
}

// parentIn reads the parent pid from a /proc/<pid>/stat line: "pid (comm)
// state ppid ...", where comm may hold spaces and parentheses.
func parentIn(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(stat[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// alive reports whether pid runs (a zombie has finished).
func alive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(raw), ')')
	fields := strings.Fields(string(raw)[i+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
