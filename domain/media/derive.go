package media

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// MaxPixels bounds the images the worker decodes (width x height), so a
// small, highly compressed file cannot make it allocate gigabytes.
const MaxPixels = 40_000_000

// variantBoxes is the square each variant of model.MediaVariantNames fits
// within, in pixels. Images already smaller keep their size: variants are
// never enlarged.
var variantBoxes = map[string]int{
	"thumbnail": 128,
	"medium":    512,
}

// jpegQuality is the quality of derived JPEG variants.
const jpegQuality = 85

// Reasons recorded on media the worker rejected (and on its operation).
// They are shown to users.
const (
	ReasonContentMissing = "the uploaded content is missing"
	ReasonSizeMismatch   = "the uploaded content is not the registered size"
	ReasonTypeMismatch   = "the uploaded content is not of the registered type"
	ReasonNotAnImage     = "the uploaded content is not a PNG or JPEG image"
	ReasonTooManyPixels  = "the image has too many pixels"
	reasonUndecodable    = "the image cannot be decoded"
	reasonUnconvertible  = "the image cannot be converted"
)

// rejection is a verdict on the content: permanent, shown to the user.
type rejection struct{ reason string }

func (r *rejection) Error() string { return r.reason }

func reject(reason string) *rejection { return &rejection{reason: domain.SanitizeText(reason)} }

// decode checks that data is what m declared, really an image of that
// format, and not too large to decode, and returns the image. A failure is
// a *rejection.
func decode(m model.Media, data []byte) (image.Image, error) {
	if int64(len(data)) != m.SizeBytes {
		return nil, reject(ReasonSizeMismatch)
	}
	want := ContentTypes[m.ContentType]
	if want == "" {
		return nil, reject(ReasonTypeMismatch)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, reject(ReasonNotAnImage)
	}
	if format != want {
		return nil, reject(fmt.Sprintf("%s: it is %s, not %s", ReasonTypeMismatch, format, want))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, reject(ReasonTooManyPixels)
	}
	img, decoded, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, reject(reasonUndecodable + ": " + err.Error())
	}
	if decoded != want {
		return nil, reject(ReasonTypeMismatch)
	}
	return img, nil
}

// derive scales img to fit within the variant's box and encodes it in
// format ("png" or "jpeg"). The output depends only on the input, so a
// redelivered job derives the same bytes. A failure is a *rejection.
func derive(img image.Image, variant, format string) ([]byte, error) {
	box, ok := variantBoxes[variant]
	if !ok {
		return nil, fmt.Errorf("media variant %q has no size", variant)
	}
	w, h := fitWithin(img.Bounds().Dx(), img.Bounds().Dy(), box)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)

	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, dst)
	case "jpeg":
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: jpegQuality})
	default:
		err = fmt.Errorf("format %q cannot be encoded", format)
	}
	if err != nil {
		return nil, reject(reasonUnconvertible)
	}
	return buf.Bytes(), nil
}

// fitWithin returns the size of a w x h image scaled down, keeping its
// aspect ratio, to fit within box x box; at least 1 x 1, never enlarged.
func fitWithin(w, h, box int) (int, int) {
	if w <= box && h <= box {
		return w, h
	}
	if w >= h {
		return box, max(1, (h*box+w/2)/w)
	}
	return max(1, (w*box+h/2)/h), box
}
