package model

import "time"

// OperatorSession is one login to the operator console, kept where every
// process of the deployment reads it (ports.OperatorSessions), so that a
// logout or a revocation through one process is obeyed by all.
type OperatorSession struct {
	// ID is the SHA-256 (hex) of the secret in the session's cookie: the
	// store never holds what a browser presents, so reading it lends no
	// one a session.
	ID string
	// Operator is the name of the operator who logged in: the name of the
	// credential they presented, never one they typed.
	Operator string
	// Credential is a fingerprint of that credential: a session outlives
	// neither its operator's removal nor a change of their token.
	Credential string
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// LiveAt says the session has not expired at now.
func (s OperatorSession) LiveAt(now time.Time) bool { return now.Before(s.ExpiresAt) }
