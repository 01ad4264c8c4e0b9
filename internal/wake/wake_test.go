package wake

import "testing"

func TestNotifyCoalesces(t *testing.T) {
	var s Signal
	for range 3 {
		s.Notify()
	}
	select {
	case <-s.C():
	default:
		t.Fatal("no wake-up after Notify")
	}
	select {
	case <-s.C():
		t.Fatal("three Notify calls woke twice")
	default:
	}
}
