package atom

import (
	"os"
	"testing"

	"mapcommons/internal/formattest"
)

// FuzzAtomRead reads any bytes: features or an EINVALID error (the input is
// in memory, so there are no I/O errors), never a panic or a hang; pass 2
// never fails once pass 1 passed; every feature fits the attributes and
// its geometry is valid WKB in range.
func FuzzAtomRead(f *testing.F) {
	for _, s := range []string{atomFeed, rss2Feed, rss1Feed, "", "<rss/>", "<feed><entry/></feed>",
		feedWith(`<georss:where><gml:Envelope><gml:lowerCorner>1 2</gml:lowerCorner><gml:upperCorner>3 4</gml:upperCorner></gml:Envelope></georss:where>`),
		feedWith(`<georss:where><gml:Polygon><gml:outerBoundaryIs><gml:LinearRing><gml:coordinates cs=";" ts="|" decimal=",">0,5;0|1;0|1;1</gml:coordinates></gml:LinearRing></gml:outerBoundaryIs></gml:Polygon></georss:where>`),
		`<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><item><title>Caf` + "\xe9" + `</title></item></channel></rss>`,
		`<!DOCTYPE x [<!ENTITY a "b">]><feed/>`,
		`<feed xmlns="http://www.w3.org/2005/Atom"><entry><content type="xhtml"><div><p>x<br/></p></div></content></entry></feed>`,
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"testdata/write.atom", "testdata/bare.atom"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		formattest.CheckRead(t, data, Open, formattest.Rules{MaxFeatures: int64(len(data)) + 1})
	})
}
