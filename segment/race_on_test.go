//go:build race

package segment

// raceEnabled: the race detector changes what allocates.
const raceEnabled = true
