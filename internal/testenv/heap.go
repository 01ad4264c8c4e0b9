package testenv

import (
	"runtime/metrics"
	"time"
)

// HeapPeak runs f and returns the live heap before it and the most seen
// while it ran (sampled every millisecond): a test's bound on what f holds.
func HeapPeak(f func()) (base, peak uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base = sample[0].Value.Uint64()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	return base, peak
}
