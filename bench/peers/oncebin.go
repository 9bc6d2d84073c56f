package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// onceLine is one line of `once-bench drain --json`. Other variants (the
// raw claim+mark limit, say) share the shape; only variant "once" is read.
type onceLine struct {
	Bench        string  `json:"bench"`
	Variant      string  `json:"variant"`
	Queue        string  `json:"queue"`
	Dispatchers  int     `json:"dispatchers"`
	Rep          int     `json:"rep"`
	Events       int     `json:"events"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
}

// parseOnceDrain picks the Dispatcher's figure out of the command's
// output: the one line with variant "once" for the given queue and
// dispatcher count. Lines that are not JSON objects (progress, a table)
// are skipped.
func parseOnceDrain(r io.Reader, queue string, dispatchers int) (result, error) {
	var found []onceLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] != '{' {
			continue
		}
		var l onceLine
		if err := json.Unmarshal(b, &l); err != nil {
			continue
		}
		if l.Variant != "once" || l.Queue != queue || l.Dispatchers != dispatchers {
			continue
		}
		found = append(found, l)
	}
	if err := sc.Err(); err != nil {
		return result{}, err
	}
	switch {
	case len(found) == 0:
		return result{}, fmt.Errorf("no line with variant once, queue %s, %d dispatchers", queue, dispatchers)
	case len(found) > 1:
		return result{}, fmt.Errorf("%d lines with variant once, queue %s, %d dispatchers; want one (--reps 1)", len(found), queue, dispatchers)
	}
	l := found[0]
	if l.Events <= 0 || l.Seconds <= 0 {
		return result{}, fmt.Errorf("once line without events or seconds: %+v", l)
	}
	return result{Events: l.Events, Seconds: l.Seconds}, nil
}

// onceBinary runs the Dispatcher's own drain bench as a subprocess, so
// this module needs nothing of the product but its binary. The command
// loads its own backlog in a fresh database before its clock starts and
// times the drain to Redis Streams the way drainPeer does.
type onceBinary struct {
	Path string
	// Extra arguments appended to the command line.
	Args []string
}

func (o onceBinary) args(prm params) []string {
	return append([]string{"drain",
		"--events", strconv.Itoa(prm.Events),
		"--workspaces", strconv.Itoa(prm.Workspaces),
		"--dispatchers", "1",
		"--queues", "redis",
		"--reps", "1",
		"--json",
	}, o.Args...)
}

func (o onceBinary) Drain(ctx context.Context, prm params) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, prm.Timeout)
	defer cancel()
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, o.Path, o.args(prm)...)
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		return result{}, fmt.Errorf("%s %v: %w", o.Path, o.args(prm), err)
	}
	res, err := parseOnceDrain(&stdout, "redis", 1)
	if err != nil {
		return result{}, fmt.Errorf("%s bench drain: %w", o.Path, err)
	}
	if res.Events != prm.Events {
		return result{}, fmt.Errorf("%s bench drain drained %d events, asked for %d", o.Path, res.Events, prm.Events)
	}
	return res, nil
}
