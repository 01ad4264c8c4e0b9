//go:build unix

package use

import (
	"syscall"
	"testing"
)

// cpuTime reports the process's CPU time per op as "cpu-ms/op" (the figure
// that holds on a shared machine, where ns/op also counts waiting for a core).
func cpuTime(b *testing.B) func() {
	start := rusage()
	return func() {
		b.ReportMetric(float64(rusage()-start)/1e6/float64(b.N), "cpu-ms/op")
	}
}

func rusage() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
