package platformerr

import "errors"

// Refused marks an external system's answer that refuses the request in
// a way its owner may yet fix: a webhook receiver's 401, 404 or 410 (a
// secret or route changed on its side), unlike a permanent answer that
// ends a job at once, and unlike an outage, which is waited out. The
// system answered, so its breaker and pace count the call as answered;
// the job is retried as a failure of its own, each run spending one of
// its attempts, and once they are spent the worker gives up on it (a
// dead letter an admin re-drives once the receiver is fixed). Whatever
// err's code, the mark decides.
func Refused(err error) error {
	if err == nil {
		return nil
	}
	return &refused{err: err}
}

type refused struct{ err error }

func (r *refused) Error() string { return r.err.Error() }
func (r *refused) Unwrap() error { return r.err }

// IsRefused reports whether err was marked by Refused.
func IsRefused(err error) bool {
	var r *refused
	return errors.As(err, &r)
}
