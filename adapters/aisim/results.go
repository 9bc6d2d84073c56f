package aisim

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Units a generation of each kind is charged.
const (
	UnitsText     int64 = 1
	UnitsCategory int64 = 1
	UnitsImage    int64 = 5
)

// ImageContentType is the type of generated images.
const ImageContentType = "image/png"

// Categories are the category paths the Sim suggests.
var Categories = []string{
	"Home & Garden > Kitchen > Cookware",
	"Clothing > Women > Dresses",
	"Electronics > Audio > Headphones",
	"Sports > Outdoor > Camping",
	"Toys > Educational",
}

// Units returns what a generation of kind costs; 0 for an unknown kind.
func Units(kind domain.AIKind) int64 {
	switch kind {
	case domain.AIText:
		return UnitsText
	case domain.AICategory:
		return UnitsCategory
	case domain.AIImage:
		return UnitsImage
	}
	return 0
}

// Result is what the Sim generates for req, deterministically: a
// description built from the title (text), a category path chosen by the
// title (category), or a small PNG derived from title and instructions
// (image). The request token plays no part.
func Result(req ports.AIRequest) ports.AIResult {
	title := strings.TrimSpace(req.Title)
	sum := sha256.Sum256([]byte(title + "\x00" + req.Instructions))
	r := ports.AIResult{Units: Units(req.Kind)}
	switch req.Kind {
	case domain.AIText:
		r.Text = fmt.Sprintf("%s: a well-made product, carefully described for your shop.", title)
		if ins := strings.TrimSpace(req.Instructions); ins != "" {
			r.Text += " Written as asked: " + ins + "."
		}
	case domain.AICategory:
		r.Category = Categories[binary.BigEndian.Uint32(sum[:4])%uint32(len(Categories))]
	case domain.AIImage:
		r.Image, r.ImageContentType = image8(sum), ImageContentType
	}
	return r
}

// image8 encodes an 8x8 PNG coloured from sum.
func image8(sum [32]byte) []byte {
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
