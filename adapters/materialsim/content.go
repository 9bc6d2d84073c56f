package materialsim

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/color"
	"image/png"
)

// Content is the file the Sim serves for rawURL: a small PNG whose pixels
// are derived from a hash of the URL, so two URLs give two files and the
// same URL always the same bytes. Tests compare stored objects against it.
func Content(rawURL string) []byte {
	sum := sha256.Sum256([]byte(rawURL))
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
