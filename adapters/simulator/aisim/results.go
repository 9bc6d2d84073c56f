package aisim

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/oncehq/once/adapters/simulator/simpng"
	"github.com/oncehq/once/domain/model"
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
func Units(kind model.AIKind) int64 {
	switch kind {
	case model.AIText:
		return UnitsText
	case model.AICategory:
		return UnitsCategory
	case model.AIImage:
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
	case model.AIText:
		r.Text = fmt.Sprintf("%s: a well-made product, carefully described for your shop.", title)
		if ins := strings.TrimSpace(req.Instructions); ins != "" {
			r.Text += " Written as asked: " + ins + "."
		}
	case model.AICategory:
		r.Category = Categories[binary.BigEndian.Uint32(sum[:4])%uint32(len(Categories))]
	case model.AIImage:
		r.Image, r.ImageContentType = simpng.Swatch(sum), ImageContentType
	}
	return r
}
