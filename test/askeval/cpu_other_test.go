//go:build !unix

package askeval

import "time"

// processCPU is 0 where the process's CPU time is not read (the benchmarks'
// cpu-ms then reads 0).
func processCPU() time.Duration { return 0 }
