package spatialite

import (
	"testing"

	"mapcommons/internal/formattest"
)

// BenchmarkWritePoints writes a million points with 5 attributes per op.
func BenchmarkWritePoints(b *testing.B) {
	formattest.BenchmarkWrite(b, WriteFile, ".sqlite", 1_000_000)
}

func BenchmarkWritePoints100k(b *testing.B) {
	formattest.BenchmarkWrite(b, WriteFile, ".sqlite", 100_000)
}
