package media

import "github.com/google/uuid"

// ObjectKey is where the original content of media id of workspace ws is
// stored. Keys are internal: they never reach clients or events.
func ObjectKey(ws, id uuid.UUID) string {
	return "media/" + ws.String() + "/" + id.String() + "/original"
}

// VariantKey is where a derived variant is stored. It depends on nothing but
// the media and the variant name, so a redelivered job writes to the same
// key and PutIfAbsent makes no second object.
func VariantKey(ws, id uuid.UUID, variant string) string {
	return "media/" + ws.String() + "/" + id.String() + "/" + variant
}
