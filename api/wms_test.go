package api_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/internal/gdaltest"
)

// wmsCaps is what the tests read of a capabilities document.
type wmsCaps struct {
	XMLName xml.Name `xml:"WMS_Capabilities"`
	Version string   `xml:"version,attr"`
	Service struct {
		Name string `xml:"Name"`
	} `xml:"Service"`
	Capability struct {
		Request struct {
			GetCapabilities struct{ Format []string } `xml:"GetCapabilities"`
			GetMap          struct{ Format []string } `xml:"GetMap"`
			GetFeatureInfo  struct{ Format []string } `xml:"GetFeatureInfo"`
			GetLegend       struct{ Format []string } `xml:"http://www.opengis.net/sld GetLegendGraphic"`
		} `xml:"Request"`
		Exception struct{ Format []string } `xml:"Exception"`
		Layer     struct {
			CRS     []string `xml:"CRS"`
			GeoBBox *struct {
				West float64 `xml:"westBoundLongitude"`
			} `xml:"EX_GeographicBoundingBox"`
			Layers []struct {
				Name    string `xml:"Name"`
				Title   string `xml:"Title"`
				GeoBBox struct {
					West  float64 `xml:"westBoundLongitude"`
					East  float64 `xml:"eastBoundLongitude"`
					South float64 `xml:"southBoundLatitude"`
					North float64 `xml:"northBoundLatitude"`
				} `xml:"EX_GeographicBoundingBox"`
				Styles []struct {
					Name      string `xml:"Name"`
					LegendURL struct {
						OnlineResource struct {
							Href string `xml:"http://www.w3.org/1999/xlink href,attr"`
						}
					}
				} `xml:"Style"`
			} `xml:"Layer"`
		} `xml:"Layer"`
	} `xml:"Capability"`
}

func wmsCapabilities(t *testing.T, ts *testServer, user string) (*wmsCaps, string) {
	t.Helper()
	w := ts.get("/wms?service=WMS&request=GetCapabilities", user)
	body := must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/xml") {
		t.Fatalf("Content-Type %q", ct)
	}
	var c wmsCaps
	if err := xml.Unmarshal(body, &c); err != nil {
		t.Fatalf("capabilities: %v\n%s", err, body)
	}
	return &c, string(body)
}

// wmsException reads a ServiceExceptionReport: its code and text.
func wmsException(t *testing.T, w *httptest.ResponseRecorder, status int) (code, text string) {
	t.Helper()
	body := must(t, w, status)
	var doc struct {
		XMLName   xml.Name `xml:"ServiceExceptionReport"`
		Exception struct {
			Code string `xml:"code,attr"`
			Text string `xml:",chardata"`
		} `xml:"ServiceException"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("not a ServiceExceptionReport (%v): %s", err, body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/xml") {
		t.Fatalf("exception Content-Type %q", ct)
	}
	return doc.Exception.Code, strings.TrimSpace(doc.Exception.Text)
}

// share opens a dataset or map to everyone (view and download).
func share(t *testing.T, ts *testServer, path string) {
	t.Helper()
	must(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions": [{"group_id": "everyone", "permissions": {"view": true, "download": true}}]}`)}), 200)
}

// TestWMSCapabilities: the capabilities are a WMS 1.3.0 document listing
// exactly the datasets each caller may download and the maps they may
// view, and nothing of the others.
func TestWMSCapabilities(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	public := uploadNC(t, ts, "")
	share(t, ts, "/datasets/"+public)
	private := uploadNC(t, ts, "?title=Secret+counties")
	publicMap := ts.createMap(t, "alice", "title=Births+map&basemap=Acetate&permissions[][group_id]=everyone&permissions[][permissions][view]=true&layers[][source]=finder:"+public)
	privateMap := ts.createMap(t, "alice", "title=Hidden+map&basemap=Acetate&layers[][source]=finder:"+private)
	// A public map of a private dataset: listed, its box not the dataset's.
	mixedMap := ts.createMap(t, "alice", "title=Mixed&basemap=Acetate&permissions[][group_id]=everyone&permissions[][permissions][view]=true&layers[][source]=finder:"+private)

	datasetName := func(id string) string {
		title := decode[map[string]any](t, must(t, ts.get("/datasets/"+id+".json", "alice"), 200))["title"].(string)
		return mapcommons.ReadableName(title, atoi(t, id))
	}
	mapName := func(path string) string {
		title := mapDoc(t, ts, path, "alice")["title"].(string)
		return "map-" + mapcommons.ReadableName(title, atoi(t, strings.TrimPrefix(path, "/maps/")))
	}
	for _, who := range []string{"", "alice", "bob", "admin"} {
		var want []string
		for _, id := range []string{public, private} {
			if ts.get("/datasets/"+id+"/features.json", who).Code == 200 {
				want = append(want, datasetName(id))
			}
		}
		for _, m := range []string{publicMap, privateMap, mixedMap} {
			if ts.get(m+".json", who).Code == 200 {
				want = append(want, mapName(m))
			}
		}
		c, body := wmsCapabilities(t, ts, who)
		var got []string
		for _, l := range c.Capability.Layer.Layers {
			got = append(got, l.Name)
			if len(l.Styles) == 0 || l.Styles[0].Name != "default" || !strings.Contains(l.Styles[0].LegendURL.OnlineResource.Href, "GetLegendGraphic") {
				t.Errorf("%q: layer %s styles %+v", who, l.Name, l.Styles)
			}
			if l.Name == mapName(mixedMap) && ts.get("/datasets/"+private+".json", who).Code != 200 && l.GeoBBox.West > -100 {
				t.Errorf("%q: the mixed map shows its private dataset's box %+v", who, l.GeoBBox)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%q: layers %v, want %v", who, got, want)
		}
		if ts.get("/datasets/"+private+".json", who).Code != 200 && strings.Contains(body, "secret") {
			t.Errorf("%q: the private dataset shows in\n%s", who, body)
		}
		if ts.get(privateMap+".json", who).Code != 200 && strings.Contains(body, "hidden") {
			t.Errorf("%q: the private map shows", who)
		}
		if c.Version != "1.3.0" || c.Service.Name != "WMS" {
			t.Errorf("version %q, service %q", c.Version, c.Service.Name)
		}
		rq := c.Capability.Request
		if !contains(rq.GetMap.Format, "image/png") || !contains(rq.GetLegend.Format, "image/png") || len(rq.GetCapabilities.Format) == 0 ||
			!contains(rq.GetFeatureInfo.Format, "application/json") || !contains(rq.GetFeatureInfo.Format, "text/html") || !contains(rq.GetFeatureInfo.Format, "text/plain") {
			t.Errorf("requests %+v", rq)
		}
		if !contains(c.Capability.Exception.Format, "XML") {
			t.Errorf("exceptions %v", c.Capability.Exception.Format)
		}
		for _, crs := range []string{"CRS:84", "EPSG:4326", "EPSG:3857"} {
			if !contains(c.Capability.Layer.CRS, crs) {
				t.Errorf("root CRSs %v", c.Capability.Layer.CRS)
			}
		}
		if c.Capability.Layer.GeoBBox == nil {
			t.Error("no EX_GeographicBoundingBox")
		}
	}
	// The counties' box, west to east.
	c, _ := wmsCapabilities(t, ts, "alice")
	for _, l := range c.Capability.Layer.Layers {
		if l.Name == datasetName(public) {
			if b := l.GeoBBox; math.Abs(b.West+84.5) > 0.6 || math.Abs(b.East+75.4) > 0.6 || math.Abs(b.South-33.8) > 0.3 || math.Abs(b.North-36.6) > 0.3 {
				t.Errorf("the counties' box %+v", b)
			}
		}
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// uploadCSV uploads a CSV as alice and returns its id.
func uploadCSV(t *testing.T, ts *testServer, title, csv string) string {
	t.Helper()
	w := ts.do(req{method: "POST", path: "/datasets.json?title=" + url.QueryEscape(title), user: "alice", ctype: "text/csv", body: []byte(csv)})
	must(t, w, 201)
	return strconv.FormatInt(int64(decode[map[string]any](t, w.Body.Bytes())["id"].(float64)), 10)
}

// paintedCentre is the centre of the pixels of img that are not
// transparent, and how many there are.
func paintedCentre(img image.Image) (x, y float64, n int) {
	b := img.Bounds()
	for py := b.Min.Y; py < b.Max.Y; py++ {
		for px := b.Min.X; px < b.Max.X; px++ {
			if _, _, _, a := img.At(px, py).RGBA(); a > 0x8000 {
				x, y, n = x+float64(px)+0.5, y+float64(py)+0.5, n+1
			}
		}
	}
	if n > 0 {
		x, y = x/float64(n), y/float64(n)
	}
	return x, y, n
}

func mercator(lon, lat float64) (float64, float64) {
	const r = 6378137.0
	return lon * math.Pi / 180 * r, math.Log(math.Tan(math.Pi/4+lat*math.Pi/360)) * r
}

// TestWMSGetMapAxisOrder: a point at a known longitude and latitude lands
// at the same pixel whether the box is CRS:84 (lon, lat), EPSG:4326 (lat,
// lon in WMS 1.3.0) or EPSG:3857 (metres), or 1.1.1's lon-first EPSG:4326.
func TestWMSGetMapAxisOrder(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadCSV(t, ts, "One point", "name,lat,lon\np,35.25,-79.5\n")
	name := "one_point-" + id
	x0, y0 := mercator(-80, 35)
	x1, y1 := mercator(-78, 36)
	_, py := mercator(-79.5, 35.25)
	mercY := (y1 - py) / (y1 - y0) * 100
	for _, c := range []struct {
		crs, bbox string
		wantY     float64
		version   string
	}{
		{"CRS:84", "-80,35,-78,36", 75, "1.3.0"},
		{"EPSG:4326", "35,-80,36,-78", 75, "1.3.0"},
		{"EPSG:3857", fmt.Sprintf("%f,%f,%f,%f", x0, y0, x1, y1), mercY, "1.3.0"},
		{"EPSG:4326", "-80,35,-78,36", 75, "1.1.1"},
	} {
		crsKey := "CRS"
		if c.version == "1.1.1" {
			crsKey = "SRS"
		}
		q := url.Values{"SERVICE": {"WMS"}, "VERSION": {c.version}, "REQUEST": {"GetMap"}, "LAYERS": {name}, "STYLES": {""},
			crsKey: {c.crs}, "BBOX": {c.bbox}, "WIDTH": {"200"}, "HEIGHT": {"100"}, "FORMAT": {"image/png"}, "TRANSPARENT": {"TRUE"}}
		img := decodePNG(t, ts.get("/wms?"+q.Encode(), ""))
		if b := img.Bounds(); b.Dx() != 200 || b.Dy() != 100 {
			t.Errorf("%s: size %v", c.crs, b)
		}
		x, y, n := paintedCentre(img)
		if n == 0 || math.Abs(x-50) > 1.5 || math.Abs(y-c.wantY) > 1.5 {
			t.Errorf("%s %s (%s): the point at %.1f,%.1f (%d pixels), want 50,%.1f", c.crs, c.bbox, c.version, x, y, n, c.wantY)
		}
	}
	// Not transparent: BGCOLOR fills the image.
	q := "/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=" + name + "&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&FORMAT=image/png&BGCOLOR=0x00FF00"
	if c := color.RGBAModel.Convert(decodePNG(t, ts.get(q, "")).At(0, 0)).(color.RGBA); c != (color.RGBA{0, 255, 0, 255}) {
		t.Errorf("background %v", c)
	}
	// Tagged by what it draws: the same image again is a 304, another
	// background another tag.
	tag := ts.get(q, "").Header().Get("ETag")
	if tag == "" {
		t.Fatal("GetMap without an ETag")
	}
	// (the handler itself: the generic OpenAPI checks of /wms fetch it bare, without a tag)
	cond := httptest.NewRequest("GET", q, nil)
	cond.Header.Set("If-None-Match", tag)
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, cond)
	if rec.Code != 304 {
		t.Errorf("GetMap with its ETag: %d", rec.Code)
	}
	if other := ts.get(strings.Replace(q, "0x00FF00", "0x0000FF", 1), "").Header().Get("ETag"); other == tag || other == "" {
		t.Errorf("another background, the tag %q (was %q)", other, tag)
	}
	// A box past the world's edge: the world drawn in its part, the point
	// where it is.
	q = "/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=" + name + "&STYLES=&CRS=CRS:84&BBOX=-360,-90,0,90&WIDTH=360&HEIGHT=180&FORMAT=image/png&TRANSPARENT=TRUE"
	if x, y, n := paintedCentre(decodePNG(t, ts.get(q, ""))); n == 0 || math.Abs(x-(360-79.5)) > 1.5 || math.Abs(y-(90-35.25)) > 1.5 {
		t.Errorf("past the edge: the point at %.1f,%.1f (%d)", x, y, n)
	}
}

// TestWMSGetMapLayers: several layers are drawn in order, the last on
// top, and a map is drawn with its styles.
func TestWMSGetMapLayers(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	nc := uploadNC(t, ts, "")
	pt := uploadCSV(t, ts, "One point", "name,lat,lon\np,35.25,-79.5\n")
	get := func(layers string) image.Image {
		return decodePNG(t, ts.get("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS="+layers+"&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&FORMAT=image/png&TRANSPARENT=TRUE", ""))
	}
	counties, point := get("nc-"+nc), get("one_point-"+pt)
	both, reversed := get("nc-"+nc+",one_point-"+pt), get("one_point-"+pt+",nc-"+nc)
	at := func(img image.Image) color.RGBA { return color.RGBAModel.Convert(img.At(50, 75)).(color.RGBA) }
	if at(both) != at(point) {
		t.Errorf("the point on top: %v, alone %v", at(both), at(point))
	}
	if at(reversed) == at(point) {
		t.Errorf("the counties over the point: %v", at(reversed))
	}
	if at(counties) == at(point) {
		t.Errorf("the counties and the point alike: %v", at(counties))
	}
	// JPEG: the same drawing on the background.
	jw := ts.get("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=nc-"+nc+"&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&FORMAT=image/jpeg&TRANSPARENT=TRUE", "")
	must(t, jw, 200)
	if ct := jw.Header().Get("Content-Type"); ct != "image/jpeg" {
		t.Fatalf("JPEG Content-Type %q", ct)
	}
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(jw.Body.Bytes())); err != nil || cfg.Width != 200 || cfg.Height != 100 {
		t.Errorf("JPEG %v %+v", err, cfg)
	}
	// A map's layers, with its styles: a red outline.
	m := ts.createMap(t, "alice", "title=Red+outline&basemap=Acetate&layers[][source]=finder:"+nc+
		"&layers[][styles][type]=PRIMITIVE&layers[][styles][stroke][color]=0xff0000&layers[][styles][stroke][weight]=3&layers[][styles][fill][opacity]=0")
	name := "map-red_outline-" + strings.TrimPrefix(m, "/maps/")
	img := decodePNG(t, ts.get("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS="+name+"&STYLES=default&CRS=EPSG:3857&BBOX=-8905559,4163881,-8683919,4300621&WIDTH=200&HEIGHT=120&FORMAT=image/png&TRANSPARENT=TRUE", ""))
	red := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA); c.A > 32 && c.R > 240 && c.G < 16 && c.B < 16 {
				red++
			}
		}
	}
	if red < 200 {
		t.Errorf("the map's red outlines: %d pixels", red)
	}
	// The map with a dataset after it, before and after the map changes:
	// not the image of the map as it was.
	withPoint := "/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=" + name + ",one_point-" + pt + "&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&FORMAT=image/png&TRANSPARENT=TRUE"
	before := ts.get(withPoint, "")
	decodePNG(t, before)
	must(t, ts.do(req{method: "PUT", path: m + "/layers/0.json", user: "alice", ctype: "application/x-www-form-urlencoded",
		body: []byte("styles[stroke][color]=0x0000ff")}), 200)
	after := ts.get(withPoint, "")
	decodePNG(t, after)
	if bytes.Equal(before.Body.Bytes(), after.Body.Bytes()) {
		t.Error("the map's image did not change with the map")
	}

}

// TestWMSExceptions: what GetMap cannot answer is a ServiceExceptionReport
// with WMS's code; a layer the caller may not see is the same
// LayerNotDefined as a missing one.
func TestWMSExceptions(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := uploadNC(t, ts, "") // alice's alone
	name := "nc-" + id
	getMap := "/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&FORMAT=image/png&LAYERS="
	for _, c := range []struct{ query, code string }{
		{strings.Replace(getMap, "CRS:84", "EPSG:32617", 1) + name, "InvalidCRS"},
		{strings.Replace(getMap, "image/png", "image/gif", 1) + name, "InvalidFormat"},
		{getMap + "nc-99999", "LayerNotDefined"},
		{getMap + "map-nothing-99999", "LayerNotDefined"},
		{getMap + "no+such+layer", "LayerNotDefined"},
		{strings.Replace(getMap, "STYLES=", "STYLES=fancy", 1) + name, "StyleNotDefined"},
		{"/wms?SERVICE=WMS&REQUEST=GetTheMap", "OperationNotSupported"},
		{strings.Replace(getMap, "WIDTH=200", "WIDTH=5000", 1) + name, ""},
		{strings.Replace(getMap, "BBOX=-80,35,-78,36", "BBOX=-78,35,-80,36", 1) + name, ""},
		{strings.Replace(getMap, "BBOX=-80,35,-78,36", "BBOX=a,b,c,d", 1) + name, ""},
		{"/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetFeatureInfo&LAYERS=" + name + "&QUERY_LAYERS=" + name + "&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&I=200&J=5", "InvalidPoint"},
		{"/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetFeatureInfo&LAYERS=" + name + "&QUERY_LAYERS=" + name + "&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&I=2&J=5&INFO_FORMAT=image/gif", "InvalidFormat"},
		{"/wms?SERVICE=WMS&REQUEST=GetLegendGraphic&LAYER=" + name + "&FORMAT=image/svg", "InvalidFormat"},
	} {
		code, text := wmsException(t, ts.get(c.query, "alice"), 200)
		if code != c.code || text == "" {
			t.Errorf("%s: code %q (%s), want %q", c.query, code, text, c.code)
		}
	}
	// bob may not see alice's dataset: the answer is a missing one's.
	_, hidden := wmsException(t, ts.get(getMap+name, "bob"), 200)
	_, missing := wmsException(t, ts.get(getMap+"nc-99999", "bob"), 200)
	if strings.ReplaceAll(hidden, name, "X") != strings.ReplaceAll(missing, "nc-99999", "X") {
		t.Errorf("hidden %q, missing %q", hidden, missing)
	}
	// Anonymous on an appliance: asked to sign in, for both alike.
	for _, l := range []string{name, "nc-99999"} {
		w := ts.get(getMap+l, "")
		wmsException(t, w, 401)
		if !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s: WWW-Authenticate %q", l, w.Header().Get("WWW-Authenticate"))
		}
	}
	decodePNG(t, ts.get(getMap+name, "alice"))
}

// TestWMSBounded: GetMap and GetFeatureInfo run under --query-timeout: a
// request past it is a 503 report; a path with a suffix is no WMS.
func TestWMSBounded(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	must(t, ts.get("/wms.html?SERVICE=WMS&REQUEST=GetCapabilities", ""), 404)
	ts.cfg.QueryTimeout = time.Nanosecond
	ts.restart()
	q := "SERVICE=WMS&VERSION=1.3.0&LAYERS=nc-" + id + "&QUERY_LAYERS=nc-" + id + "&STYLES=&CRS=CRS:84&BBOX=-84,34,-76,37&WIDTH=300&HEIGHT=100&FORMAT=image/png&I=150&J=50&INFO_FORMAT=application/json"
	for _, op := range []string{"GetMap", "GetFeatureInfo"} {
		if code, text := wmsException(t, ts.get("/wms?REQUEST="+op+"&"+q, ""), http.StatusServiceUnavailable); code != "" || text == "" {
			t.Errorf("%s: %q %q", op, code, text)
		}
	}
}

// TestWMSGetFeatureInfo: the county under a pixel, as GeoJSON, an HTML
// table and key = value text.
func TestWMSGetFeatureInfo(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	name := "nc-" + id
	// Raleigh, in Wake county, in a box of -84,33.5 to -75,37 at 900×350:
	// one pixel a hundredth of a degree.
	i, j := int((-78.64+84)*100), int((37-35.78)*100)
	info := func(format string, extra string) *httptest.ResponseRecorder {
		return ts.get(fmt.Sprintf("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetFeatureInfo&LAYERS=%s&QUERY_LAYERS=%s&STYLES=&CRS=EPSG:4326&BBOX=33.5,-84,37,-75&WIDTH=900&HEIGHT=350&I=%d&J=%d&INFO_FORMAT=%s%s",
			name, name, i, j, url.QueryEscape(format), extra), "")
	}
	w := info("application/json", "")
	fc := decode[struct {
		Type     string
		Features []struct {
			Properties map[string]any
			Geometry   struct{ Type string }
		}
	}](t, must(t, w, 200))
	if fc.Type != "FeatureCollection" || len(fc.Features) != 1 || fc.Features[0].Properties["NAME"] != "Wake" || fc.Features[0].Geometry.Type == "" {
		t.Fatalf("features %+v", fc)
	}
	h := info("text/html", "")
	if ct := h.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || !strings.Contains(h.Body.String(), "<td>Wake</td>") ||
		!strings.Contains(h.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("HTML %q %s", ct, h.Body.String())
	}
	if txt := info("text/plain", "").Body.String(); !strings.Contains(txt, "NAME = Wake") {
		t.Errorf("text %s", txt)
	}
	// FEATURE_COUNT: at a corner of counties, more than one.
	if n := len(decode[struct{ Features []any }](t, must(t, info("application/json", "&FEATURE_COUNT=500"), 200)).Features); n != 1 {
		t.Errorf("%d features inside one county", n)
	}
	// Outside North Carolina: none.
	w = ts.get("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetFeatureInfo&LAYERS="+name+"&QUERY_LAYERS="+name+"&STYLES=&CRS=CRS:84&BBOX=0,0,1,1&WIDTH=10&HEIGHT=10&I=5&J=5&INFO_FORMAT=application/json", "")
	if n := len(decode[struct{ Features []any }](t, must(t, w, 200)).Features); n != 0 {
		t.Errorf("%d features off the coast of Africa", n)
	}
	// HTML is escaped.
	pt := uploadCSV(t, ts, "Tags", "name,lat,lon\n<b>bold</b>,35.25,-79.5\n")
	w = ts.get("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetFeatureInfo&LAYERS=tags-"+pt+"&QUERY_LAYERS=tags-"+pt+"&STYLES=&CRS=CRS:84&BBOX=-80,35,-78,36&WIDTH=200&HEIGHT=100&I=51&J=74&INFO_FORMAT=text/html", "")
	if b := w.Body.String(); strings.Contains(b, "<b>") || !strings.Contains(b, "&lt;b&gt;bold") {
		t.Errorf("HTML of a point: %s", b)
	}
}

// TestWMSFeatureInfoOfMap: a map's features come from its layers the
// caller may download, the top one first; a layer left out tells nothing.
func TestWMSFeatureInfoOfMap(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	public := uploadNC(t, ts, "")
	share(t, ts, "/datasets/"+public)
	private := uploadCSV(t, ts, "Secret point", "name,lat,lon\nhidden,35.78,-78.64\n")
	m := ts.createMap(t, "alice", "title=Both&basemap=Acetate&permissions[][group_id]=everyone&permissions[][permissions][view]=true"+
		"&layers[][source]=finder:"+public+"&layers[][source]=finder:"+private)
	name := "map-both-" + strings.TrimPrefix(m, "/maps/")
	i, j := int((-78.64+84)*100), int((37-35.78)*100)
	q := fmt.Sprintf("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetFeatureInfo&LAYERS=%s&QUERY_LAYERS=%s&STYLES=&CRS=EPSG:4326&BBOX=33.5,-84,37,-75&WIDTH=900&HEIGHT=350&I=%d&J=%d&INFO_FORMAT=application/json&FEATURE_COUNT=5", name, name, i, j)
	names := func(who string) []any {
		var out []any
		for _, f := range decode[struct {
			Features []struct{ Properties map[string]any }
		}](t, must(t, ts.get(q, who), 200)).Features {
			out = append(out, f.Properties["name"], f.Properties["NAME"])
		}
		return out
	}
	if got := fmt.Sprint(names("alice")); got != "[hidden <nil> <nil> Wake]" {
		t.Errorf("alice: %s", got)
	}
	if got := fmt.Sprint(names("bob")); got != "[<nil> Wake]" {
		t.Errorf("bob: %s", got)
	}
}

// TestWMSLegend: a classed layer's legend has a swatch per class in the
// classes' colours; a dataset's, one in the default fill's.
func TestWMSLegend(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	m := ts.createMap(t, "alice", "title=Births&basemap=Acetate&layers[][source]=finder:"+id+"&layers[][styles][type]=CHOROPLETH"+
		"&layers[][styles][fill][selectedAttribute]=BIR74&layers[][styles][fill][classificationType]=Quantile&layers[][styles][fill][categories]=5")
	doc := decode[struct {
		Layers []struct {
			Styles struct {
				Fill struct {
					Classification struct{ Colors []int }
				}
			}
		}
	}](t, must(t, ts.get(m+".json", "alice"), 200))
	want := doc.Layers[0].Styles.Fill.Classification.Colors
	if len(want) != 5 {
		t.Fatalf("classes %v", want)
	}
	img := decodePNG(t, ts.get("/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetLegendGraphic&LAYER=map-births-"+strings.TrimPrefix(m, "/maps/")+"&STYLE=default&FORMAT=image/png", ""))
	// Swatches of 20 pixels, 4 apart, from 4, 4.
	for i, rgb := range want {
		c := color.RGBAModel.Convert(img.At(14, 4+i*24+10)).(color.RGBA)
		if c != (color.RGBA{uint8(rgb >> 16), uint8(rgb >> 8), uint8(rgb), 255}) {
			t.Errorf("class %d: swatch %v, want %06x", i, c, rgb)
		}
	}
	if b := img.Bounds(); b.Dy() != 4+5*24 || b.Dx() < 60 {
		t.Errorf("legend %v", b)
	}
	// Text beside the swatches: dark pixels right of them.
	dark := 0
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 30; x < img.Bounds().Dx(); x++ {
			if r, _, _, _ := img.At(x, y).RGBA(); r < 0x8000 {
				dark++
			}
		}
	}
	if dark < 50 {
		t.Errorf("%d dark pixels of text", dark)
	}
	// Legends drawn at once (under -race: each its own font face).
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for k := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := httptest.NewRecorder()
			ts.handler.ServeHTTP(w, httptest.NewRequest("GET", "/wms?SERVICE=WMS&REQUEST=GetLegendGraphic&LAYER=nc-"+id+"&FORMAT=image/png", nil))
			codes[k] = w.Code
		}()
	}
	wg.Wait()
	if fmt.Sprint(codes) != "[200 200 200 200 200 200 200 200]" {
		t.Errorf("legends at once: %v", codes)
	}
	ds := decodePNG(t, ts.get("/wms?SERVICE=WMS&REQUEST=GetLegendGraphic&LAYER=nc-"+id+"&FORMAT=image/png", ""))
	if c := color.RGBAModel.Convert(ds.At(14, 14)).(color.RGBA); c != (color.RGBA{0x46, 0x82, 0xb4, 255}) {
		t.Errorf("the dataset's swatch %v", c)
	}
}

// TestWMSWithGDAL: GDAL's WMS driver lists the layers of the capabilities
// as subdatasets and reads a layer as an image of the counties.
func TestWMSWithGDAL(t *testing.T) {
	t.Parallel()
	gdalinfo := gdaltest.NeedTool(t, "gdalinfo")
	translate := gdaltest.NeedTool(t, "gdal_translate")
	ts := newServer(t, noBaseURL)
	id := uploadNC(t, ts, "")
	wms := strings.TrimSuffix(listen(t, ts.handler), "/ogc") + "/wms"
	// GDAL's WMS driver caches blocks in ./gdalwmscache unless told
	// otherwise: in the test's own directory, so that every run asks the
	// server and leaves nothing in the tree.
	cache := []string{"--config", "GDAL_DEFAULT_WMS_CACHE_PATH", t.TempDir()}
	out, err := exec.Command(gdalinfo, append(cache, "WMS:"+wms+"?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities")...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "LAYERS=nc-"+id) {
		t.Fatalf("gdalinfo does not list the layer: %v\n%s", err, out)
	}
	// The subdataset as GDAL lists it (CRS:84, no FORMAT: GDAL asks for
	// JPEG) reads as the counties.
	sub := regexp.MustCompile(`SUBDATASET_\d+_NAME=(\S+LAYERS=nc-` + id + `\S*)`).FindSubmatch(out)
	if sub == nil {
		t.Fatalf("no subdataset of nc-%s in\n%s", id, out)
	}
	jpg := filepath.Join(t.TempDir(), "sub.png")
	if b, err := exec.Command(translate, append(cache, "-q", "-of", "PNG", "-outsize", "128", "0", string(sub[1]), jpg)...).CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate %s: %v\n%s", sub[1], err, b)
	}
	img := gdalTranslatePNG(t, "-outsize", "256", "0",
		"WMS:"+wms+"?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=nc-"+id+"&CRS=EPSG:4326&BBOX=33.8,-84.4,36.6,-75.4&FORMAT=image/png")
	if bb := img.Bounds(); bb.Dx() != 256 || bb.Dy() < 50 || bb.Dy() > 150 {
		t.Errorf("size %v", bb)
	}
	if n, all := opaqueish(img), img.Bounds().Dx()*img.Bounds().Dy(); n < all/3 {
		t.Errorf("%d of %d pixels drawn", n, all)
	}
}

// TestWMSWithQGIS: QGIS's WMS provider, headless, opens a layer from the
// capabilities (valid, the counties' extent) and reads a block of the
// counties drawn.
func TestWMSWithQGIS(t *testing.T) {
	t.Parallel()
	py := qgisPython(t)
	ts := newServer(t, noBaseURL)
	id := uploadNC(t, ts, "")
	wms := strings.TrimSuffix(listen(t, ts.handler), "/ogc") + "/wms"
	out := runQGIS(t, py, "testdata/wms_qgis.py", wms, "nc-"+id)
	var got struct {
		Valid                  bool
		Error                  string
		Extent                 []float64
		CRS                    string
		Width, Height, Painted int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("qgis said: %s", out)
	}
	if !got.Valid || got.CRS != "EPSG:4326" || len(got.Extent) != 4 || got.Width != 256 || got.Height != 80 || got.Painted < 256*80/3 {
		t.Fatalf("qgis: %+v", got)
	}
	if math.Abs(got.Extent[0]+84.5) > 1 || math.Abs(got.Extent[2]+75.4) > 1 {
		t.Errorf("qgis extent %v", got.Extent)
	}
}

// FuzzWMSParams: whatever the query, /wms answers (an image, a document or
// a ServiceExceptionReport), never a panic or a 500.
func FuzzWMSParams(f *testing.F) {
	ts := newServer(f)
	if w := ts.do(req{method: "POST", path: "/datasets.json?title=nc", user: "alice", ctype: "text/csv", body: numbersCSV(20)}); w.Code != 201 {
		f.Fatalf("upload: %d %s", w.Code, w.Body.String())
	}
	for _, q := range []string{
		"SERVICE=WMS&REQUEST=GetCapabilities",
		"SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=nc-1&STYLES=&CRS=EPSG:4326&BBOX=33,-85,37,-75&WIDTH=20&HEIGHT=10&FORMAT=image/png",
		"service=wms&version=1.1.1&request=getmap&layers=nc-1&srs=EPSG:3857&bbox=-1e9,-1e9,1e9,1e9&width=3&height=3&format=image/png&transparent=true",
		"REQUEST=GetFeatureInfo&LAYERS=nc-1&QUERY_LAYERS=nc-1&CRS=CRS:84&BBOX=-85,33,-75,37&WIDTH=10&HEIGHT=10&I=3&J=4&INFO_FORMAT=text/html&FEATURE_COUNT=99",
		"REQUEST=GetLegendGraphic&LAYER=nc-1&WIDTH=1&HEIGHT=256",
		"REQUEST=GetMap&LAYERS=map-x-1,nc-1&STYLES=,&CRS=CRS:84&BBOX=-180,-90,180,90&WIDTH=1&HEIGHT=1&FORMAT=image/png&BGCOLOR=zz",
		"%zz&&=&REQUEST",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/wms", nil)
		r.URL.RawQuery = q
		r.SetBasicAuth("alice", "secret1")
		w := httptest.NewRecorder()
		ts.handler.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%q: %d %s", q, w.Code, w.Body.String())
		}
		switch ct := w.Header().Get("Content-Type"); {
		case strings.HasPrefix(ct, "image/png"), strings.HasPrefix(ct, "text/"), strings.HasPrefix(ct, "application/json"):
		default:
			t.Fatalf("%q: Content-Type %q", q, ct)
		}
		if w.Code != http.StatusOK && w.Code != http.StatusUnauthorized && w.Code != http.StatusBadRequest {
			t.Fatalf("%q: status %d", q, w.Code)
		}
	})
}
