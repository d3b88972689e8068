//go:build race

package mvt

// raceEnabled: under the race detector the tile encoder runs several
// times slower; TestGDALTilePolygonsValid leaves out the deepest zooms of
// the countries, which the run without it covers.
const raceEnabled = true
