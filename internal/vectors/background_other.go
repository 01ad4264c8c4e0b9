//go:build !linux

package vectors

// lowerPriority does nothing where a thread's priority cannot be set on its
// own (the queue still embeds on one core).
func lowerPriority(int) {}
