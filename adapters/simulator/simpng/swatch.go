// Package simpng makes the small images the simulated external systems
// hand out (the AI provider's generated images, the material source's
// files): real PNGs, so the workers that decode them do real work, derived
// from a hash, so the same request always gets the same bytes.
package simpng

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
)

// Swatch encodes an 8x8 PNG whose pixels are coloured from sum.
func Swatch(sum [32]byte) []byte {
	const side = 8
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			i := (y*side + x) % (len(sum) - 2)
			img.SetNRGBA(x, y, color.NRGBA{R: sum[i], G: sum[i+1], B: sum[i+2], A: 0xff})
		}
	}
	var buf bytes.Buffer
	// Encoding an in-memory image into a buffer cannot fail.
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}
