//go:build !linux

package sqlite

// lowerPriority does nothing where threads have no priority of their own.
func lowerPriority() {}
