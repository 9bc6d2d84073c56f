package storm

import "sync"

// burst sends n requests as one wave: every sender is ready before any is
// released. got is called with each answer, concurrently.
func burst(n int, send func() answer, got func(answer)) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-release
			got(send())
		})
	}
	close(release)
	wg.Wait()
}
