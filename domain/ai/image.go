package ai

import (
	"fmt"

	"github.com/google/uuid"
)

// A generated image is stored and registered under names derived from its
// task alone, so a redelivered task finds the object and the media row of
// an earlier delivery instead of making new ones.

// ImageObjectKey is where the image of an image task is stored:
// ai/<workspace>/<task>/image.
func ImageObjectKey(workspace, task uuid.UUID) string {
	return fmt.Sprintf("ai/%s/%s/image", workspace, task)
}

// ImageMediaID is the id of the media row of an image task's image (a
// name-based UUID in the task id's namespace).
func ImageMediaID(task uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(task, []byte("image"))
}

// ImageFilename is the generated image's file name.
func ImageFilename(task uuid.UUID) string {
	return fmt.Sprintf("ai-%s.png", task)
}
