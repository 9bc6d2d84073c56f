package materials

import (
	"fmt"

	"github.com/google/uuid"
)

// ObjectKey is where item index of a transfer is stored:
// materials/<workspace>/<transfer>/<index>. It depends on nothing the
// source returns, so every delivery writes the same key and PutIfAbsent
// keeps the first object.
func ObjectKey(workspace, transfer uuid.UUID, index int) string {
	return fmt.Sprintf("materials/%s/%s/%d", workspace, transfer, index)
}
