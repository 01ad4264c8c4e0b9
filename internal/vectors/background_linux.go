package vectors

import (
	"log/slog"
	"syscall"
)

// lowerPriority sets the calling thread's nice value (on Linux,
// setpriority of a thread id changes that thread only).
func lowerPriority(nice int) {
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice); err != nil {
		slog.Debug("vectors: the background thread keeps its priority", "err", err)
	}
}
