package testkit

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// PNG is a w x h PNG with detail to scale (a gradient), for uploads that
// the media worker must really decode and derive.
func PNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(x), G: uint8(y), B: uint8(x ^ y), A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
