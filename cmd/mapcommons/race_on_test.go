//go:build race

package main

// raceEnabled: under the race detector the server runs several times
// slower; the crash test uploads less so that its kills still land during
// the ingest without taking minutes.
const raceEnabled = true
