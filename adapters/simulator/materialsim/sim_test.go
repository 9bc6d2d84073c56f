package materialsim_test

import (
	"bytes"
	"context"
	"image/png"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/materialsim"
	"github.com/oncehq/once/domain"
)

const signed = "https://cdn.example.com/a/b.png?X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA123"

func TestFetchServesTheSameBytesForTheSameURL(t *testing.T) {
	s := materialsim.New()
	a1, ct, err := s.Fetch(context.Background(), "https://example.com/a.png")
	require.NoError(t, err)
	assert.Equal(t, materialsim.ContentType, ct)
	a2, _, err := s.Fetch(context.Background(), "https://example.com/a.png")
	require.NoError(t, err)
	b, _, err := s.Fetch(context.Background(), "https://example.com/b.png")
	require.NoError(t, err)

	assert.Equal(t, a1, a2)
	assert.NotEqual(t, a1, b)
	assert.Equal(t, materialsim.Content("https://example.com/a.png"), a1)
	_, err = png.Decode(bytes.NewReader(a1))
	assert.NoError(t, err, "a real PNG")
	assert.Equal(t, 2, s.Fetches("https://example.com/a.png"))
	assert.Equal(t, 1, s.Fetches("https://example.com/b.png"))
	assert.Equal(t, 3, s.FetchCount())
}

func TestFailNextFailsThatURLNTimes(t *testing.T) {
	s := materialsim.New()
	s.FailNext(signed, 2, nil)
	for range 2 {
		_, _, err := s.Fetch(context.Background(), signed)
		assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	}
	_, _, err := s.Fetch(context.Background(), "https://example.com/other.png")
	assert.NoError(t, err, "other URLs are not affected")
	_, _, err = s.Fetch(context.Background(), signed)
	assert.NoError(t, err)
	assert.Equal(t, 3, s.Fetches(signed), "failed fetches count too")

	s.FailNext(signed, 1, domain.Errorf(domain.CodeValidation, "not an image"))
	_, _, err = s.Fetch(context.Background(), signed)
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
}

func TestMissingHostIsNotFoundWithoutTheQuery(t *testing.T) {
	s := materialsim.New()
	for _, u := range []string{
		"https://missing/a.png?sig=secret123",
		"https://user:pw@cdn.missing/a.png?X-Amz-Signature=secret123",
	} {
		_, _, err := s.Fetch(context.Background(), u)
		require.True(t, domain.IsCode(err, domain.CodeNotFound), "%v", err)
		assert.NotContains(t, err.Error(), "secret123")
		assert.NotContains(t, err.Error(), "pw@")
		assert.Contains(t, err.Error(), "/a.png")
	}
}

func TestInvalidURLsAreRefusedWithoutEchoingThem(t *testing.T) {
	s := materialsim.New()
	for _, u := range []string{"ftp://example.com/a?token=secret123", "not a url secret123", "https:///a?x=secret123", "://secret123"} {
		_, _, err := s.Fetch(context.Background(), u)
		require.True(t, domain.IsCode(err, domain.CodeValidation), "%q: %v", u, err)
		assert.NotContains(t, err.Error(), "secret123")
	}
}

func TestLatencyRespectsTheContext(t *testing.T) {
	s := materialsim.New(materialsim.WithLatency(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := s.Fetch(ctx, signed)
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	assert.NotContains(t, err.Error(), "deadbeef")
}

func TestConcurrentFetchesAreCounted(t *testing.T) {
	s := materialsim.New(materialsim.WithLatency(time.Millisecond))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _, err := s.Fetch(context.Background(), signed)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, 8, s.Fetches(signed))
}
