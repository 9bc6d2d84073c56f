package simhttp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Entry is one line of the ledger: a side effect the simulated systems
// performed (Effect true: a verification, a listing, an AI charge, keyed by
// its request token), or a read they served (a catalog, a material file,
// named by Subject).
type Entry struct {
	Seq    int64     `json:"seq"`
	At     time.Time `json:"at"`
	Kind   Kind      `json:"kind"`
	Token  string    `json:"token,omitempty"`
	Effect bool      `json:"effect"`
	// Subject is what a read was about: the shop, or the file's URL without
	// userinfo, query or fragment.
	Subject string `json:"subject,omitempty"`
	// Data is what the simulator needs to answer the token again after a
	// restart (the verdict, the listing, the generated result). It holds
	// no credentials.
	Data json.RawMessage `json:"data,omitempty"`
}

// Filter selects ledger entries; empty fields match everything.
type Filter struct {
	Kind        Kind
	Token       string
	Subject     string
	EffectsOnly bool
}

// Match reports whether e is selected.
func (f Filter) Match(e Entry) bool {
	return (f.Kind == "" || e.Kind == f.Kind) &&
		(f.Token == "" || e.Token == f.Token) &&
		(f.Subject == "" || e.Subject == f.Subject) &&
		(!f.EffectsOnly || e.Effect)
}

// Ledger is the durable record of what the simulated systems did: an
// append-only file of JSON lines, each written and fsynced before the
// effect it records becomes visible, so a kill -9 of the server at any
// moment leaves either the whole effect (answered again after a restart)
// or none of it (nobody was told it happened). It is safe for concurrent
// use.
type Ledger struct {
	mu      sync.Mutex
	file    *os.File
	entries []Entry
}

// OpenLedger opens the ledger at path, creating it and its directory if
// needed, and loads what it holds. A last line cut short by a crash during
// its write is dropped from the file: its effect never happened. Any other
// unreadable line is an error.
func OpenLedger(path string) (*Ledger, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("ledger directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	entries, complete, err := readEntries(f)
	if err == nil {
		err = truncateTo(f, complete)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	return &Ledger{file: f, entries: entries}, nil
}

// ReadLedger reads the ledger at path without changing it (a torn last
// line is skipped), for reading the effects of a simulator that is not
// running.
func ReadLedger(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, _, err := readEntries(f)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	return entries, nil
}

// readEntries decodes every complete line of r and returns the offset just
// after the last one. A final line without its newline is torn: it is not
// an entry and not an error.
func readEntries(r io.Reader) (entries []Entry, complete int64, err error) {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return entries, complete, nil // raw, if any, is a torn write
		}
		if err != nil {
			return nil, 0, err
		}
		var e Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, 0, fmt.Errorf("line %d is not a ledger entry: %w", line, err)
		}
		entries = append(entries, e)
		complete += int64(len(raw))
	}
}

func truncateTo(f *os.File, size int64) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.Size() != size {
		if err := f.Truncate(size); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	_, err = f.Seek(size, io.SeekStart)
	return err
}

// syncDir makes a newly created ledger file's name durable too.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Append numbers e, stamps it, writes it as one line and fsyncs the file
// before returning: once Append returned nil the entry survives any crash.
func (l *Ledger) Append(e Entry) (Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return Entry{}, errors.New("the ledger is closed")
	}
	e.Seq = int64(len(l.entries)) + 1
	e.At = time.Now().UTC()
	raw, err := json.Marshal(e)
	if err != nil {
		return Entry{}, err
	}
	if _, err := l.file.Write(append(raw, '\n')); err != nil {
		return Entry{}, fmt.Errorf("write ledger: %w", err)
	}
	if err := l.file.Sync(); err != nil {
		return Entry{}, fmt.Errorf("sync ledger: %w", err)
	}
	l.entries = append(l.entries, e)
	return e, nil
}

// appendData appends an entry carrying data as its Data.
func (l *Ledger) appendData(kind Kind, token string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = l.Append(Entry{Kind: kind, Token: token, Effect: true, Data: raw})
	return err
}

// Entries returns the entries f selects, in order.
func (l *Ledger) Entries(f Filter) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Select(l.entries, f)
}

// Select returns the entries of entries that f selects, in order.
func Select(entries []Entry, f Filter) []Entry {
	out := []Entry{}
	for _, e := range entries {
		if f.Match(e) {
			out = append(out, e)
		}
	}
	return slices.Clip(out)
}

// Close closes the file; later appends fail.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}
