package queue

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTicketLineKeepsItsOrderBothWays(t *testing.T) {
	var q ticketLine
	a, b, c, d := &ticket{seq: 1}, &ticket{seq: 2}, &ticket{seq: 3}, &ticket{seq: 4}
	q.pushBack(b)
	q.insertBefore(a, b) // at the front
	q.pushBack(d)
	q.insertBefore(c, d) // in the middle
	assert.Equal(t, []uint64{1, 2, 3, 4}, lineSeqs(&q))

	q.remove(a) // the front
	q.remove(c) // the middle
	q.remove(d) // the back
	assert.Equal(t, []uint64{2}, lineSeqs(&q))
	assert.Nil(t, a.in, "a ticket out of its line is in none")
	assert.True(t, b.in == &q)

	q.remove(b)
	assert.Zero(t, q, "an emptied line is as new")
}

// lineSeqs is q's tickets' seqs, front to back, checked back to front too.
func lineSeqs(q *ticketLine) []uint64 {
	var out, back []uint64
	for t := q.front; t != nil; t = t.next {
		out = append(out, t.seq)
	}
	for t := q.back; t != nil; t = t.prev {
		back = append([]uint64{t.seq}, back...)
	}
	if len(out) != q.len() || len(back) != q.len() {
		return nil
	}
	for i := range out {
		if out[i] != back[i] {
			return nil
		}
	}
	return out
}
