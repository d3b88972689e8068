//go:build race

package spatial

// raceEnabled: under the race detector the brute-force comparisons of the
// tests run several times slower; the random far points, which rarely
// decide anything, are fewer, and so are the points near the vertices.
const raceEnabled = true

// raceCut is how many of n random cases a test tries: a quarter under the
// race detector, which looks for data races rather than wrong answers
// (.ci/run also runs every test without it, with all the cases).
func raceCut(n int) int { return max(1, n/4) }
