package modules

import "time"

// SetClock replaces the clock that stamps created_at and updated_at, for the
// tests of package modules_test.
func (r *Registry) SetClock(now func() time.Time) { r.now = now }
