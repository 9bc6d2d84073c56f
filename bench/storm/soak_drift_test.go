package storm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDriftSeesALeakButNotOneBurst(t *testing.T) {
	flat := []float64{27, 29, 27, 30, 31, 28, 29, 30, 28, 30, 30, 35, 30, 30, 27, 29, 31, 28, 30, 29}
	assert.InDelta(t, 0, drift(flat), 0.05, "flat samples")

	burst := append([]float64(nil), flat...)
	burst[13] = 60 // one sample of connections opened at once
	assert.LessOrEqual(t, drift(burst), 0.10, "one burst is no trend")

	leak := make([]float64, 20)
	for i := range leak {
		leak[i] = 100 + float64(i) // +19 over a mean of 109.5
	}
	assert.InDelta(t, 19.0/109.5, drift(leak), 0.001, "a steady leak is its whole rise")
	leak[5] = 40 // an outlier does not hide it
	assert.Greater(t, drift(leak), 0.15)

	assert.Zero(t, drift([]float64{5}))
	assert.Zero(t, drift([]float64{0, 0, 0}))
}
