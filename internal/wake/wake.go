// Package wake is a wake-up call that coalesces: Notify never blocks, and a
// goroutine waiting on C wakes once for any number of Notify calls made
// since it last woke. Its zero value is ready to use.
//
//	var w wake.Signal
//	go func() { for range w.C() { pass() } }()
//	w.Notify() // from a writer: a pass soon
package wake

import "sync"

// Signal is one wake-up call.
type Signal struct {
	once sync.Once
	c    chan struct{}
}

func (s *Signal) init() { s.c = make(chan struct{}, 1) }

// C is what a waiter receives a wake-up from.
func (s *Signal) C() <-chan struct{} {
	s.once.Do(s.init)
	return s.c
}

// Notify asks for a wake-up soon; it never blocks.
func (s *Signal) Notify() {
	s.once.Do(s.init)
	select {
	case s.c <- struct{}{}:
	default:
	}
}
