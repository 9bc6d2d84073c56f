package storm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAnswersOverRunsNameEveryStatusAnyRunGot(t *testing.T) {
	runs := []map[int]int{{201: 1, 409: 800, 503: 199}, {201: 1, 409: 999}, {201: 1, 409: 700, 0: 3}}
	assert.Equal(t, "none:0 (0–3) 201:1 409:800 (700–999) 503:0 (0–199)", formatAnswers(runs))
	assert.Equal(t, 202, failures(runs[0])+failures(runs[2]))
}

func TestDurationsReadAsMillisecondsUnderASecond(t *testing.T) {
	assert.Equal(t, "12.5 ms", duration(0.0125))
	assert.Equal(t, "1.80 s", duration(1.8))
}
