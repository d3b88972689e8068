package proj

import "mapcommons/proj/wkt"

// Limits of the WKT parser: they bound the work done on hostile input.
const (
	maxPRJLen   = 64 << 10
	maxWKTNodes = 4096
)

// node is a node of the WKT tree.
type node = wkt.Node

// parseWKT parses one WKT node making up all of s.
func parseWKT(s string) (*node, error) { return wkt.Parse(s, maxWKTNodes) }

// norm reduces a WKT name to lower-case letters and digits, so that ESRI
// ("Standard_Parallel_1"), OGC ("standard_parallel_1") and WKT2 ("Latitude
// of 1st standard parallel") spellings compare simply.
func norm(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		}
	}
	return string(b)
}
