//go:build !race

package mvt

const raceEnabled = false
