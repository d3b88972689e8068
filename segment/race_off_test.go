//go:build !race

package segment

// raceEnabled: the race detector changes what allocates.
const raceEnabled = false

// raceCut is how many of n random cases a test tries: all of them without
// the race detector.
func raceCut(n int) int { return n }
