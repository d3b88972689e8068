package api_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/internal/gdaltest"
)

// TestOGCMapTiles: a collection is a map tileset of PNG tiles, linked from
// the collection, its tile template under the collection's id as asked,
// its tiles drawn where the features are and transparent elsewhere, with
// the vector tiles' errors and validators.
func TestOGCMapTiles(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	coll := decode[struct{ Links []ogcLink }](t, must(t, ts.get("/ogc/collections/"+id, ""), 200))
	href := link(coll.Links, "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map", "application/json")
	if href != base+"/ogc/collections/nc-"+id+"/map/tiles" {
		t.Fatalf("tilesets-map link %q", href)
	}
	sets := decode[struct {
		Tilesets []struct {
			DataType string
			Links    []ogcLink
		}
	}](t, must(t, ts.get(pathOf(t, href), ""), 200))
	if len(sets.Tilesets) != 1 || sets.Tilesets[0].DataType != "map" {
		t.Fatalf("tilesets %+v", sets)
	}
	tileset := decode[struct {
		DataType string
		Links    []ogcLink
		Limits   []struct {
			TileMatrix                                     string
			MinTileRow, MaxTileRow, MinTileCol, MaxTileCol int
		} `json:"tileMatrixSetLimits"`
	}](t, must(t, ts.get(pathOf(t, link(sets.Tilesets[0].Links, "self", "application/json")), ""), 200))
	tmpl := link(tileset.Links, "item", "image/png")
	if tileset.DataType != "map" || tmpl != base+"/ogc/collections/nc-"+id+"/map/tiles/WebMercatorQuad/{tileMatrix}/{tileRow}/{tileCol}" ||
		link(tileset.Links, "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme", "application/json") == "" {
		t.Fatalf("tileset %+v", tileset)
	}
	// Zoom 6: the tiles the limits give hold the counties.
	var z6 = tileset.Limits[6]
	if z6.TileMatrix != "6" {
		t.Fatalf("limits %+v", tileset.Limits[:7])
	}
	painted := 0
	for y := z6.MinTileRow; y <= z6.MaxTileRow; y++ {
		for x := z6.MinTileCol; x <= z6.MaxTileCol; x++ {
			p := strings.NewReplacer("{tileMatrix}", "6", "{tileRow}", itoa(int64(y)), "{tileCol}", itoa(int64(x))).Replace(tmpl)
			img := decodePNG(t, ts.get(pathOf(t, p)+".png", ""))
			if b := img.Bounds(); b.Dx() != 256 || b.Dy() != 256 {
				t.Fatalf("%s: %v", p, b)
			}
			painted += opaqueish(img)
		}
	}
	if painted < 1000 {
		t.Errorf("the zoom 6 tiles paint %d pixels", painted)
	}
	// A tile of the matrix outside the limits is a 404; outside the
	// matrix, a 400; an ETag answers 304; a number finds the same tile.
	tile := "/ogc/collections/" + id + "/map/tiles/WebMercatorQuad/6/" + itoa(int64(z6.MinTileRow)) + "/" + itoa(int64(z6.MinTileCol))
	must(t, ts.get("/ogc/collections/"+id+"/map/tiles/WebMercatorQuad/6/0/0", ""), 404)
	must(t, ts.get("/ogc/collections/"+id+"/map/tiles/WebMercatorQuad/1/2/0", ""), 400)
	must(t, ts.get("/ogc/collections/"+id+"/map/tiles/WorldCRS84Quad/0/0/0", ""), 404)
	w := ts.get(tile, "")
	decodePNG(t, w)
	if got := ts.do(req{method: "GET", path: tile, header: map[string]string{"If-None-Match": w.Header().Get("ETag")}}).Code; got != 304 {
		t.Errorf("If-None-Match: %d", got)
	}
	conf := decode[struct{ ConformsTo []string }](t, must(t, ts.get("/ogc/conformance", ""), 200))
	if !slices.Contains(conf.ConformsTo, "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/png") {
		t.Error("the png class is not declared")
	}
}

// TestOGCMapTilesPermissions: map tiles are answered as the features are.
func TestOGCMapTilesPermissions(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := uploadNC(t, ts, "") // private to alice on an appliance
	for _, who := range []string{"", "bob"} {
		want := ts.get("/datasets/"+id+"/features.json", who).Code
		for _, p := range []string{"/map/tiles", "/map/tiles/WebMercatorQuad", "/map/tiles/WebMercatorQuad/0/0/0"} {
			if got := ts.get("/ogc/collections/nc-"+id+p, who).Code; got != want || got == 200 {
				t.Errorf("%q on %s: %d, features.json %d", who, p, got, want)
			}
		}
	}
	decodePNG(t, ts.get("/ogc/collections/"+id+"/map/tiles/WebMercatorQuad/0/0/0", "alice"))
}

// opaqueish counts the pixels of img that are more than half opaque.
func opaqueish(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a > 0x7fff {
				n++
			}
		}
	}
	return n
}

// TestOGCMapWithGDAL: GDAL's OGC API driver opens a collection as a
// raster through its map (OGC API – Maps: the requests of 256-pixel
// blocks its WMS driver makes) and reads it (gdal_translate to a PNG): the
// counties are drawn in it. (Debian's GDAL 3.6 opens a collection's tiles
// as vector or raster only when it links one kind of tileset, so its map
// is what GDAL reads.)
func TestOGCMapWithGDAL(t *testing.T) {
	t.Parallel()
	gdaltest.NeedTool(t, "gdal_translate")
	ts := newServer(t, noBaseURL)
	id := uploadNC(t, ts, "")
	img := gdalTranslatePNG(t, "-oo", "API=MAP", "-outsize", "256", "0", "OGCAPI:"+listen(t, ts.handler)+"/collections/nc-"+id)
	// North Carolina is about three times wider than high; most of its
	// box is the counties.
	if bb := img.Bounds(); bb.Dx() != 256 || bb.Dy() < 50 || bb.Dy() > 150 {
		t.Errorf("size %v", bb)
	}
	if n, all := opaqueish(img), img.Bounds().Dx()*img.Bounds().Dy(); n < all/3 {
		t.Errorf("%d of %d pixels drawn", n, all)
	}
}

// TestOGCCollectionMap: /ogc/collections/{id}/map draws the collection as
// one PNG (OGC API – Maps), in plate carrée unless asked for Web Mercator,
// the box given filling the image, the background transparent unless
// asked for a colour; what it does not take is a 400.
func TestOGCCollectionMap(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	coll := decode[struct{ Links []ogcLink }](t, must(t, ts.get("/ogc/collections/"+id, ""), 200))
	href := link(coll.Links, "http://www.opengis.net/def/rel/ogc/1.0/map", "image/png")
	if href != base+"/ogc/collections/nc-"+id+"/map" {
		t.Fatalf("map link %q", href)
	}
	w := ts.get(pathOf(t, href), "")
	img := decodePNG(t, w)
	if b := img.Bounds(); b.Dx() != 512 || b.Dy() < 100 || b.Dy() > 250 {
		t.Errorf("default size %v", b)
	}
	if crs := w.Header().Get("Content-Crs"); crs != "<http://www.opengis.net/def/crs/OGC/1.3/CRS84>" {
		t.Errorf("Content-Crs %q", crs)
	}
	if got := ts.do(req{method: "GET", path: pathOf(t, href), header: map[string]string{"If-None-Match": w.Header().Get("ETag")}}).Code; got != 304 {
		t.Errorf("If-None-Match: %d", got)
	}
	sized := decodePNG(t, ts.get(pathOf(t, href)+"?width=300&height=100&bbox=-84,34,-76,36.5", ""))
	if b := sized.Bounds(); b.Dx() != 300 || b.Dy() != 100 {
		t.Errorf("sized %v", b)
	}
	merc := ts.get(pathOf(t, href)+"?crs="+url.QueryEscape("http://www.opengis.net/def/crs/EPSG/0/3857"), "")
	if crs := merc.Header().Get("Content-Crs"); crs != "<http://www.opengis.net/def/crs/EPSG/0/3857>" {
		t.Errorf("Content-Crs %q", crs)
	}
	// Mercator stretches north: the same extent is taller than in plate carrée.
	if m, p := decodePNG(t, merc).Bounds(), img.Bounds(); m.Dy() <= p.Dy() {
		t.Errorf("Web Mercator %v, plate carrée %v", m, p)
	}
	// The background: transparent where no county is, unless asked.
	corner := func(img image.Image) color.NRGBA { return color.NRGBAModel.Convert(img.At(0, 0)).(color.NRGBA) }
	far := "?width=20&height=20&bbox=10,10,11,11"
	if c := corner(decodePNG(t, ts.get(pathOf(t, href)+far, ""))); c.A != 0 {
		t.Errorf("transparent: %v", c)
	}
	if c := corner(decodePNG(t, ts.get(pathOf(t, href)+far+"&transparent=false&bgcolor=0x336699", ""))); c != (color.NRGBA{0x33, 0x66, 0x99, 255}) {
		t.Errorf("bgcolor: %v", c)
	}
	if c := corner(decodePNG(t, ts.get(pathOf(t, href)+far+"&transparent=false", ""))); c != (color.NRGBA{255, 255, 255, 255}) {
		t.Errorf("default bgcolor: %v", c)
	}
	for _, q := range []string{"width=0", "height=9999", "bbox=1,2,3", "bbox=10,0,-10,5", "crs=EPSG:2000", "bbox-crs=EPSG:2000",
		"transparent=maybe", "bgcolor=blue-ish", "f=jpeg", "style=x"} {
		errorOf(t, ts.get(pathOf(t, href)+"?"+q, ""), 400, "invalid", "")
	}
}

// TestOGCMapTilesWithGDAL: GDAL's tile reader (its WMS driver's TMS
// service, as QGIS's XYZ layers read) reads the map tiles of a collection
// over North Carolina at zoom 6 into one image: the counties are drawn.
func TestOGCMapTilesWithGDAL(t *testing.T) {
	t.Parallel()
	gdaltest.NeedTool(t, "gdal_translate")
	ts := newServer(t, noBaseURL)
	id := uploadNC(t, ts, "")
	const world = 20037508.342789244
	xml := `<GDAL_WMS><Service name="TMS"><ServerUrl>` + listen(t, ts.handler) + `/collections/nc-` + id +
		`/map/tiles/WebMercatorQuad/${z}/${y}/${x}.png</ServerUrl></Service>` +
		`<DataWindow><UpperLeftX>-` + ftoa(world) + `</UpperLeftX><UpperLeftY>` + ftoa(world) + `</UpperLeftY>` +
		`<LowerRightX>` + ftoa(world) + `</LowerRightX><LowerRightY>-` + ftoa(world) + `</LowerRightY>` +
		`<TileLevel>6</TileLevel><TileCountX>1</TileCountX><TileCountY>1</TileCountY><YOrigin>top</YOrigin></DataWindow>` +
		`<Projection>EPSG:3857</Projection><BlockSizeX>256</BlockSizeX><BlockSizeY>256</BlockSizeY><BandsCount>4</BandsCount>` +
		`<ZeroBlockHttpCodes>204,404</ZeroBlockHttpCodes></GDAL_WMS>`
	// North Carolina in Web Mercator metres.
	img := gdalTranslatePNG(t, "-projwin", "-9390000", "4390000", "-8390000", "3990000", "-outsize", "256", "0", xml)
	if n, all := opaqueish(img), img.Bounds().Dx()*img.Bounds().Dy(); n < all/4 {
		t.Errorf("%d of %d pixels drawn", n, all)
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// gdalTranslatePNG runs gdal_translate with args and the source last, to
// a PNG it reads back, GDAL's WMS block cache in a temporary directory
// (not in the tree, nor kept between tests).
func gdalTranslatePNG(t *testing.T, args ...string) image.Image {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.png")
	cmd := exec.Command(gdaltest.NeedTool(t, "gdal_translate"), append(append([]string{"-q", "-of", "PNG"}, args...), out)...)
	cmd.Env = append(os.Environ(), "GDAL_DEFAULT_WMS_CACHE_PATH="+t.TempDir())
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate %v: %v\n%s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}
