//go:build race

package segment

// raceEnabled: the race detector changes what allocates.
const raceEnabled = true

// raceCut is how many of n random cases a test tries: a quarter under the
// race detector, which looks for data races rather than wrong answers
// (.ci/run also runs every test without it, with all the cases).
func raceCut(n int) int { return max(1, n/4) }
