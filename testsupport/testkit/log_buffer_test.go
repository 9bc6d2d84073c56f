package testkit_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/testsupport/testkit"
)

func TestLogBufferKeepsConcurrentWrites(t *testing.T) {
	var b testkit.LogBuffer
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, _ = fmt.Fprintf(&b, "line %d\n", i)
			_ = b.String()
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	assert.Len(t, lines, 20)
	for i := range 20 {
		assert.Contains(t, lines, fmt.Sprintf("line %d", i))
	}
}
