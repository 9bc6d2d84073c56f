package testkit

import (
	"bytes"
	"sync"
)

// LogBuffer is a bytes.Buffer safe for concurrent writers, for capturing
// the logs of handlers and servers under test. The zero value is ready.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
