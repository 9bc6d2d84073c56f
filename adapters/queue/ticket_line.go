package queue

// ticketLine is tickets in order, linked through the tickets themselves
// (ticket.prev, ticket.next): a waiting ticket moves between its
// workspace's line and a destination's held line at every refusal and
// every refusal's end (a platform's pace sets all of its shops' tickets
// aside and puts them back at each token), and a container/list made an
// element at each move: a third of the worker's allocations per job.
type ticketLine struct {
	front, back *ticket
	n           int
}

// len is how many tickets the line holds.
func (q *ticketLine) len() int { return q.n }

// pushBack puts t, in no line, at q's end.
func (q *ticketLine) pushBack(t *ticket) { q.insertBefore(t, nil) }

// insertBefore puts t, in no line, before at, one of q's (nil: at q's end).
func (q *ticketLine) insertBefore(t, at *ticket) {
	t.in, t.next = q, at
	if at == nil {
		t.prev, q.back = q.back, t
	} else {
		t.prev, at.prev = at.prev, t
	}
	if t.prev == nil {
		q.front = t
	} else {
		t.prev.next = t
	}
	q.n++
}

// remove takes t, one of q's, out of q.
func (q *ticketLine) remove(t *ticket) {
	if t.prev == nil {
		q.front = t.next
	} else {
		t.prev.next = t.next
	}
	if t.next == nil {
		q.back = t.prev
	} else {
		t.next.prev = t.prev
	}
	t.in, t.prev, t.next = nil, nil, nil
	q.n--
}
