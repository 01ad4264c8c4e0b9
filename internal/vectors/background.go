package vectors

import (
	"runtime"
	"sync"
)

// backgroundNice is the scheduling priority (nice value) of the thread the
// embedding queue embeds on, where the platform has one (Linux): the
// kernel gives a write's or an ask's thread the core first, and the
// queue what is left.
const backgroundNice = 10

// background runs f on the process's one background thread: an OS thread
// locked to a goroutine of its own, at backgroundNice where the platform
// lets it (lowerPriority), so the queue's embedding (pure computation, on
// one core: rowcall.InBackground) never delays a write or an ask by more
// than the kernel's wake-up of their thread. Calls from several queues
// run one after another.
func background(f func()) {
	bg.once.Do(func() {
		bg.jobs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread is this goroutine's for the process's life
			lowerPriority(backgroundNice)
			for job := range bg.jobs {
				job()
			}
		}()
	})
	done := make(chan struct{})
	bg.jobs <- func() { defer close(done); f() }
	<-done
}

var bg struct {
	once sync.Once
	jobs chan func()
}
