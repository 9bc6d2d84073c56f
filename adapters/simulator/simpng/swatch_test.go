package simpng

import (
	"bytes"
	"image/png"
	"testing"
)

func TestSwatchIsAnEightPixelPNGThatFollowsItsSum(t *testing.T) {
	a, b := Swatch([32]byte{1, 2, 3}), Swatch([32]byte{9, 8, 7})
	img, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 8 || r.Dy() != 8 {
		t.Fatalf("bounds %v, want 8x8", r)
	}
	if !bytes.Equal(a, Swatch([32]byte{1, 2, 3})) {
		t.Fatal("the same sum gave other bytes")
	}
	if bytes.Equal(a, b) {
		t.Fatal("two sums gave the same bytes")
	}
}
