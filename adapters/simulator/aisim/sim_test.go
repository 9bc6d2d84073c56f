package aisim_test

import (
	"bytes"
	"context"
	"image/png"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/aisim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func req(token string, kind model.AIKind) ports.AIRequest {
	return ports.AIRequest{RequestToken: token, Kind: kind, Title: "Cast iron pan", Description: "28 cm", Instructions: "short"}
}

func TestResultsPerKind(t *testing.T) {
	s := aisim.New()
	text, err := s.Generate(context.Background(), req("t1", model.AIText))
	require.NoError(t, err)
	assert.Contains(t, text.Text, "Cast iron pan")
	assert.Equal(t, aisim.UnitsText, text.Units)

	cat, err := s.Generate(context.Background(), req("t2", model.AICategory))
	require.NoError(t, err)
	assert.Contains(t, aisim.Categories, cat.Category)
	assert.Equal(t, aisim.UnitsCategory, cat.Units)

	img, err := s.Generate(context.Background(), req("t3", model.AIImage))
	require.NoError(t, err)
	assert.Equal(t, aisim.ImageContentType, img.ImageContentType)
	assert.Equal(t, aisim.UnitsImage, img.Units)
	_, err = png.Decode(bytes.NewReader(img.Image))
	assert.NoError(t, err)

	assert.Equal(t, 3, s.Charges())
	assert.Equal(t, 3, s.Calls())
}

func TestARepeatedTokenIsChargedOnce(t *testing.T) {
	s := aisim.New()
	first, err := s.Generate(context.Background(), req("tok", model.AIImage))
	require.NoError(t, err)
	again := req("tok", model.AIImage)
	again.Title = "edited meanwhile"
	second, err := s.Generate(context.Background(), again)
	require.NoError(t, err)
	assert.Equal(t, first, second, "the first result, whatever changed")
	assert.Equal(t, 1, s.ChargesFor("tok"))
	assert.Equal(t, 1, s.Charges())
	assert.Equal(t, 2, s.Calls())

	_, err = s.Generate(context.Background(), req("tok", model.AIText))
	assert.True(t, domain.IsCode(err, domain.CodeConflict), "%v", err)
}

func TestConcurrentCallsWithOneTokenChargeOnce(t *testing.T) {
	s := aisim.New(aisim.WithLatency(time.Millisecond))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := s.Generate(context.Background(), req("tok", model.AIText))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, s.Charges())
	assert.Equal(t, 8, s.Calls())
}

func TestFailNextDoesNotCharge(t *testing.T) {
	s := aisim.New()
	s.FailNext(1, nil)
	_, err := s.Generate(context.Background(), req("tok", model.AIText))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable))
	assert.Zero(t, s.Charges())
	_, err = s.Generate(context.Background(), req("tok", model.AIText))
	require.NoError(t, err)
	assert.Equal(t, 1, s.ChargesFor("tok"))
}

func TestFailAfterChargeChargesAndLosesTheAnswer(t *testing.T) {
	s := aisim.New()
	s.FailAfterCharge(1)
	_, err := s.Generate(context.Background(), req("tok", model.AICategory))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	assert.Equal(t, 1, s.ChargesFor("tok"))

	r, err := s.Generate(context.Background(), req("tok", model.AICategory))
	require.NoError(t, err)
	assert.NotEmpty(t, r.Category)
	assert.Equal(t, 1, s.ChargesFor("tok"), "the retry gets the first result free")
}

func TestContentPolicyIsPermanentAndFree(t *testing.T) {
	s := aisim.New()
	r := req("tok", model.AIText)
	r.Instructions = "make it sound FORBIDDEN"
	_, err := s.Generate(context.Background(), r)
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "%v", err)
	assert.Zero(t, s.Charges())
}

func TestBadRequestsAreRefused(t *testing.T) {
	s := aisim.New()
	_, err := s.Generate(context.Background(), req("", model.AIText))
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
	_, err = s.Generate(context.Background(), req("tok", "video"))
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
	assert.Zero(t, s.Charges())
}

func TestLatencyRespectsTheContext(t *testing.T) {
	s := aisim.New(aisim.WithLatency(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := s.Generate(ctx, req("tok", model.AIText))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable))
	assert.Zero(t, s.Charges())
}
