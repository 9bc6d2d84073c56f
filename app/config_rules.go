package app

import (
	"cmp"
	"fmt"
)

// invalidIf is one rule of a group's Validate: the error, worded by format
// and args, when broken holds; nil otherwise. A Validate is then the
// errors.Join of its rules, each on one line.
func invalidIf(broken bool, format string, args ...any) error {
	if !broken {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// outside reports whether v lies outside [lo, hi], the bounds a setting's
// message names.
func outside[T cmp.Ordered](v, lo, hi T) bool { return v < lo || v > hi }
