//go:build !race

package api_test

// raceCut is how many of n random cases an oracle test tries: all of them
// without the race detector.
func raceCut(n int) int { return n }
