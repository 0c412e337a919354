package testkit

import "sync"

// AtOnce runs fn(0) … fn(n-1) on n goroutines released together (as
// nearly as possible at one moment, the better to meet a race) and waits
// for all of them.
func AtOnce(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}
