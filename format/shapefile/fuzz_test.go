package shapefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"testing"
	"unicode/utf8"

	"mapcommons"
	"mapcommons/format/wkb"
)

// realSeed returns the first n records of a real shapefile: small enough
// for the fuzzer to mutate quickly.
func realSeed(t testing.TB, base string, n int) [2][]byte {
	shp, err := os.ReadFile(realDir + base + ".shp")
	if err != nil {
		t.Fatal(err)
	}
	dbf, err := os.ReadFile(realDir + base + ".dbf")
	if err != nil {
		t.Fatal(err)
	}
	end := headerSize
	for range n {
		end += recHeaderSize + 2*int(binary.BigEndian.Uint32(shp[end+4:]))
	}
	shp = append([]byte(nil), shp[:end]...)
	be32(shp[24:], int32(end/2))
	hdrLen := int(binary.LittleEndian.Uint16(dbf[8:]))
	recLen := int(binary.LittleEndian.Uint16(dbf[10:]))
	dbf = append([]byte(nil), dbf[:hdrLen+n*recLen]...)
	le32(dbf[4:], int32(n))
	return [2][]byte{shp, append(dbf, 0x1A)}
}

// fuzzSeeds returns (shp, dbf) pairs: the start of real files and
// synthetic ones.
func fuzzSeeds(t testing.TB) [][2][]byte {
	seeds := [][2][]byte{realSeed(t, "naturalearth_cities", 12), realSeed(t, "nc", 4), realSeed(t, "naturalearth_lowres", 3)}
	files := []*tFile{
		smallFile(),
		(&tFile{typ: shapePolygon, shapes: []tShape{
			parts(shapePolygon, big, bigH, midS, midH), parts(shapePolygon, sq10, sqB, holeB, hole1),
			parts(shapePolygon, hole1), parts(shapePolygon, sq10, degen, open10),
		}}).withIDs(),
		(&tFile{typ: shapeMultiPointZ, shapes: []tShape{parts(shapeMultiPointZ, mpts), {typ: shapeNull}}}).withIDs(),
		(&tFile{typ: shapePolyLineM, shapes: []tShape{parts(shapePolyLineM, line3, line2), parts(shapePolyLine, line3)}}).withIDs(),
		(&tFile{typ: shapePointM, shapes: []tShape{pt(shapePointM, 1, 2), pt(shapePointZ, 3, 4), pt(shapePoint, 5, 6)}}).withIDs(),
	}
	for _, f := range files {
		shp, _ := f.shpAndShx()
		seeds = append(seeds, [2][]byte{shp, f.dbf()})
	}
	return seeds
}

// checkFuzzError fails unless err is an EINVALID *mapcommons.Error (the
// readers are in memory: there is no other failure).
func checkFuzzError(t *testing.T, err error) {
	var e *mapcommons.Error
	if !errors.As(err, &e) || e.Code != mapcommons.EINVALID || e.Message == "" {
		t.Fatalf("error %v (%T) is not EINVALID", err, err)
	}
}

// checkGeom fails unless g is well formed: rings closed with 4 points or
// more, lines of 2 points or more, coordinates finite.
func checkGeom(t *testing.T, g wkb.Geom) {
	for _, v := range g.Coords {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite coordinate in %+v", g)
		}
	}
	switch g.Type {
	case wkb.LineString:
		if len(g.Coords) < 4 {
			t.Fatalf("line of %d points", len(g.Coords)/2)
		}
	case wkb.Polygon:
		for _, r := range g.Rings {
			n := len(r)
			if n < 8 || r[0] != r[n-2] || r[1] != r[n-1] {
				t.Fatalf("bad ring %v", r)
			}
			checkGeom(t, wkb.Geom{Type: wkb.Point, Coords: r})
		}
	}
	for _, p := range g.Parts {
		checkGeom(t, p)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, shp, dbf []byte) {
		r, err := Open(bytes.NewReader(shp), bytes.NewReader(dbf), nil, Options{})
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		attrs := r.Attributes()
		for n := int64(0); ; n++ {
			feat, err := r.Next()
			if err == io.EOF {
				return
			} else if err != nil {
				checkFuzzError(t, err)
				return
			}
			if feat.Position != n || len(feat.Values) != len(attrs) {
				t.Fatalf("feature %d: position %d, %d values for %d attributes", n, feat.Position, len(feat.Values), len(attrs))
			}
			for i, v := range feat.Values {
				ok := v == nil
				switch v := v.(type) {
				case int64:
					ok = attrs[i].Type == mapcommons.AttrInteger
				case float64:
					ok = attrs[i].Type == mapcommons.AttrFloat && !math.IsNaN(v) && !math.IsInf(v, 0)
				case bool:
					ok = attrs[i].Type == mapcommons.AttrBoolean
				case string:
					ok = (attrs[i].Type == mapcommons.AttrString || attrs[i].Type == mapcommons.AttrDate) && utf8.ValidString(v)
				}
				if !ok {
					t.Fatalf("feature %d: value %#v for a column of type %s", n, v, attrs[i].Type)
				}
			}
			if feat.Geometry != nil {
				g, err := wkb.Decode(feat.Geometry)
				if err != nil {
					t.Fatalf("feature %d: bad WKB: %v", n, err)
				}
				checkGeom(t, g)
			}
		}
	})
}

func FuzzClassifyPRJ(f *testing.F) {
	for _, s := range []string{
		"", prjUTM, prjWKT2NAD27, `GEOGCS("x",UNIT("degree",1))`, `COMPD_CS["x",GEOGCS["y"],VERT_CS["z"]]`,
		`BOUNDCRS[SOURCECRS[GEOGCRS["NAD27"]],TARGETCRS[GEOGCRS["WGS 84"]]]`, `GEODCRS["a""b",CS[Cartesian,3]]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prj string) {
		if _, _, err := ClassifyPRJ(prj); err != nil {
			checkFuzzError(t, err)
		}
	})
}
