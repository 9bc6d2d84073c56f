package products

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// Limits of a draft.
const (
	MaxTitleLength       = 200
	MaxDescriptionLength = 10000
	MaxMediaIDs          = 20
)

// Draft is what an editor saves: every editable field of a product.
type Draft struct {
	Title       string
	Description string
	// PriceMinor is the price in the currency's minor unit (cents).
	PriceMinor int64
	// Currency is an ISO 4217 code: three upper-case letters.
	Currency string
	// MediaIDs are the product's images, in order.
	MediaIDs []uuid.UUID
}

// normalize returns the draft as it is stored: the title trimmed, the media
// ids copied so the caller's slice is not shared.
func (d Draft) normalize() Draft {
	d.Title = strings.TrimSpace(d.Title)
	if d.MediaIDs == nil {
		d.MediaIDs = []uuid.UUID{}
	} else {
		d.MediaIDs = append([]uuid.UUID(nil), d.MediaIDs...)
	}
	return d
}

// product is the draft as product id of workspace, saved at now.
func (d Draft) product(id, workspace uuid.UUID, now time.Time) model.Product {
	return model.Product{
		ID: id, WorkspaceID: workspace, UpdatedAt: now,
		Title: d.Title, Description: d.Description, PriceMinor: d.PriceMinor, Currency: d.Currency, MediaIDs: d.MediaIDs,
	}
}

// validate checks a normalized draft. Errors: domain.CodeValidation.
func (d Draft) validate() error {
	switch n := utf8.RuneCountInString(d.Title); {
	case !utf8.ValidString(d.Title) || !utf8.ValidString(d.Description):
		return domain.Errorf(domain.CodeValidation, "title and description must be UTF-8")
	case n == 0:
		return domain.Errorf(domain.CodeValidation, "title must not be empty")
	case n > MaxTitleLength:
		return domain.Errorf(domain.CodeValidation, "title must be at most %d characters", MaxTitleLength)
	case utf8.RuneCountInString(d.Description) > MaxDescriptionLength:
		return domain.Errorf(domain.CodeValidation, "description must be at most %d characters", MaxDescriptionLength)
	case d.PriceMinor < 0:
		return domain.Errorf(domain.CodeValidation, "price_minor must not be negative")
	case !validCurrency(d.Currency):
		return domain.Errorf(domain.CodeValidation, "currency must be three upper-case letters (ISO 4217)")
	case len(d.MediaIDs) > MaxMediaIDs:
		return domain.Errorf(domain.CodeValidation, "a product has at most %d media", MaxMediaIDs)
	}
	seen := make(map[uuid.UUID]bool, len(d.MediaIDs))
	for _, id := range d.MediaIDs {
		if id == uuid.Nil {
			return domain.Errorf(domain.CodeValidation, "media_ids must not contain the nil id")
		}
		if seen[id] {
			return domain.Errorf(domain.CodeValidation, "media_ids must not repeat media %s", id)
		}
		seen[id] = true
	}
	return nil
}

func validCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := range len(c) {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}
