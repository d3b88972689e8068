package api_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// pointShapefile writes a point shapefile (.shp and .dbf, one string field
// "name") of the given coordinates into dir and returns the paths.
func pointShapefile(t *testing.T, dir string, xy [][2]float64) (string, string) {
	t.Helper()
	le, be := binary.LittleEndian, binary.BigEndian
	var shp bytes.Buffer
	h := make([]byte, 100)
	be.PutUint32(h[0:], 9994)
	be.PutUint32(h[24:], uint32((100+len(xy)*28)/2))
	le.PutUint32(h[28:], 1000)
	le.PutUint32(h[32:], 1)
	box := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range xy {
		box = [4]float64{min(box[0], p[0]), min(box[1], p[1]), max(box[2], p[0]), max(box[3], p[1])}
	}
	for i, v := range box {
		le.PutUint64(h[36+8*i:], math.Float64bits(v))
	}
	shp.Write(h)
	for i, p := range xy {
		rec := make([]byte, 28)
		be.PutUint32(rec[0:], uint32(i+1))
		be.PutUint32(rec[4:], 10)
		le.PutUint32(rec[8:], 1)
		le.PutUint64(rec[12:], math.Float64bits(p[0]))
		le.PutUint64(rec[20:], math.Float64bits(p[1]))
		shp.Write(rec)
	}
	var dbf bytes.Buffer
	dh := make([]byte, 32)
	dh[0] = 3
	dh[1], dh[2], dh[3] = 126, 1, 1
	le.PutUint32(dh[4:], uint32(len(xy)))
	le.PutUint16(dh[8:], 32+32+1)
	le.PutUint16(dh[10:], 1+10)
	dbf.Write(dh)
	fd := make([]byte, 32)
	copy(fd, "name")
	fd[11] = 'C'
	fd[16] = 10
	dbf.Write(fd)
	dbf.WriteByte(0x0D)
	for i := range xy {
		dbf.WriteByte(' ')
		dbf.WriteString(string(rune('a'+i)) + "         ")
	}
	dbf.WriteByte(0x1A)
	sp, dp := filepath.Join(dir, "pts.shp"), filepath.Join(dir, "pts.dbf")
	if err := os.WriteFile(sp, shp.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dp, dbf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return sp, dp
}

// TestShapefileWithoutPRJ: without a .prj, coordinates are taken as
// longitude/latitude; coordinates that cannot be (State Plane feet, here)
// are a 400 that asks for the .prj, and nothing is stored.
func TestShapefileWithoutPRJ(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	dir := t.TempDir()
	sp, dp := pointShapefile(t, dir, [][2]float64{{-73.9, 40.7}, {-74, 40.8}})
	body, ct := multipartBody(t, map[string]string{"dataset[shp]": sp, "dataset[dbf]": dp}, nil)
	if d := datasetDoc(t, ts, ts.createFrom(t, ct, body), ""); d["feature_count"] != 2.0 {
		t.Fatalf("lon/lat points without .prj: %v", d)
	}
	for _, xy := range [][][2]float64{
		{{913175, 120121}, {1067382, 272844}}, // NYC boroughs, State Plane feet
		{{-73.9, 40.7}, {-74, 95}},            // the second point only
	} {
		dir := t.TempDir()
		sp, dp := pointShapefile(t, dir, xy)
		body, ct := multipartBody(t, map[string]string{"dataset[shp]": sp, "dataset[dbf]": dp}, nil)
		w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
		errorOf(t, w, 400, "invalid", ".prj")
	}
	errorOf(t, ts.get("/datasets/2.json", ""), 404, "not_found", "")
}
