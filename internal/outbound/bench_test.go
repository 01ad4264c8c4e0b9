package outbound

import (
	"net/netip"
	"testing"
)

// BenchmarkCheck is the policy's cost per dial: the ranges and the cached
// interface addresses ("cached"), and a read of the interface addresses, which
// the first dial after ownTTL pays ("reread").
func BenchmarkCheck(b *testing.B) {
	addr := netip.MustParseAddrPort("93.184.216.34:443")
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if err := (Policy{}).Check(addr); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reread", func(b *testing.B) {
		for b.Loop() {
			own.mu.Lock()
			own.addrs = nil
			own.mu.Unlock()
			if err := (Policy{}).Check(addr); err != nil {
				b.Fatal(err)
			}
		}
	})
}
