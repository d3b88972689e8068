//go:build race

package spatial

// raceEnabled: under the race detector the brute-force comparisons of the
// tests run several times slower; the random far points, which rarely
// decide anything, are fewer (the points near the vertices stay all).
const raceEnabled = true
