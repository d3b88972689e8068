package params

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons"
)

// Shapefile-like binary test data: NULs, CRLFs and a dash run that looks
// like the start of a delimiter.
var (
	shpData = "\x00\x00\x27\x0a\x00\x00\x00\x00\r\n--89d6e383699\r\n\xff\xfe--\x00"
	dbfData = "\x03\x6f\x03\x0a\x02\x00\x00\x00\r\n\r\n-- \x1a"
	shxData = "\x00\x00\x27\x0a\x00\x00\x00\x32"
)

// rbBody is geoiq-ruby's shp_upload_body for simple.shp/.dbf/.shx.
func rbBody() string {
	b := "89d6e3836995"
	return "--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"dataset[shp]\"; filename=\"simple.shp\"\r\n" +
		"Content-Type: application/octet-stream\r\n" +
		"\r\n" + shpData +
		"\r\n--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"dataset[dbf]\"; filename=\"simple.dbf\"\r\n" +
		"Content-Type: application/octet-stream\r\n" +
		"\r\n" + dbfData +
		"\r\n--" + b + "\r\n" +
		"Content-Disposition: form-data; name=\"dataset[shx]\"; filename=\"simple.shx\"\r\n" +
		"Content-Type: application/octet-stream\r\n" +
		"\r\n" + shxData +
		"\r\n--" + b + "--\r\n"
}

const netBoundary = "----------------------------8cf2c5e0f1b3a4d"

// netFile is GeoIQ4Net's fileHeaderTemplate, the data and its newline.
func netFile(typ, name, data string) string {
	return "--" + netBoundary + "\r\n" +
		"Content-Disposition: form-data; name=\"overlay[" + typ + "]\" ; filename=\"" + name + "\"; \r\n" +
		"Content-Type: application/octet-stream\r\n\r\n" + data + "\r\n"
}

// netEnd is GeoIQ4Net's closing: CRLF--boundary CRLF, no final "--".
const netEnd = "\r\n--" + netBoundary + "\r\n"

// netWild is GeoIQ4Net's getWildHeaders for a .climgen file.
func netWild(filename string) string {
	field := func(name, value string) string {
		return "--" + netBoundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\" \r\n\r\n" + value + "\r\n"
	}
	return field("Filename", filename) + field("overlay[file_key_seed]", "1315531831") +
		field("fileext", "*.dbf;*.shx;*.prj;*.shp;*.csv;*.kml;*.rss;*.kmz;*.climgen") +
		field("uploadify", "true") + field("z", "z") + field("folder", "/") + field("overlay[target_state]", "complete")
}

// pyBody is what geoiq-python's poster.encode.multipart_encode sends: text
// fields with Content-Type text/plain; charset=utf-8, file parts with a
// filename.
func pyBody(b string) string {
	part := func(disp, ct, data string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; " + disp + "\r\nContent-Type: " + ct + "\r\n\r\n" + data + "\r\n"
	}
	return part(`name="title"`, "text/plain; charset=utf-8", "Garden sculptures") +
		part(`name="description"`, "text/plain; charset=utf-8", "line 1\r\nline 2") +
		part(`name="tags"`, "text/plain; charset=utf-8", "art, parks") +
		part(`name="dataset[shp]"; filename="simple.shp"`, "application/octet-stream", shpData) +
		part(`name="dataset[dbf]"; filename="simple.dbf"`, "application/x-dbf", dbfData) +
		part(`name="dataset[shx]"; filename="simple.shx"`, "application/octet-stream", shxData) +
		"--" + b + "--\r\n"
}

type wantUpload struct{ field, filename, ct, data string }

func checkUploads(t *testing.T, q *Request, want []wantUpload) {
	t.Helper()
	if len(q.Uploads) != len(want) {
		t.Fatalf("%d uploads, want %d: %+v", len(q.Uploads), len(want), q.Uploads)
	}
	for i, w := range want {
		u := q.Uploads[i]
		if u.Field != w.field || u.Filename != w.filename || u.ContentType != w.ct {
			t.Errorf("upload %d: %+v, want %+v", i, u, w)
		}
		b, err := os.ReadFile(u.Path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != w.data || u.Size != int64(len(w.data)) {
			t.Errorf("upload %d (%s): data %q size %d, want %q", i, u.Field, b, u.Size, w.data)
		}
	}
}

func TestMultipartStandard(t *testing.T) {
	t.Parallel()
	b := "a1f0c4e2b7d94b6c8e3f5a7b9c1d2e3f" // poster: a uuid4 hex
	r := newReq("POST", "/datasets.json?author=me", "multipart/form-data; boundary="+b, strings.NewReader(pyBody(b)))
	q := parse(t, r, ParseOptions{MaxBody: 1 << 20})
	want := `{"author":"me","description":"line 1\r\nline 2","tags":"art, parks","title":"Garden sculptures"}`
	if got := tree(t, q.Params); got != compact(t, want) {
		t.Errorf("params %s", got)
	}
	checkUploads(t, q, []wantUpload{
		{"dataset[shp]", "simple.shp", "application/octet-stream", shpData},
		{"dataset[dbf]", "simple.dbf", "application/x-dbf", dbfData},
		{"dataset[shx]", "simple.shx", "application/octet-stream", shxData},
	})
	if q.Body != nil {
		t.Errorf("Body %+v", q.Body)
	}
	if ext := filepath.Ext(q.Uploads[0].Path); ext != ".shp" {
		t.Errorf("temp file %s", q.Uploads[0].Path)
	}
}

func TestMultipartCurl(t *testing.T) {
	t.Parallel()
	// curl -F "dataset[csv]=@C:\data\pts.csv;type=text/csv" -F "title=x" -F "overlay[kml]=@/tmp/a.kml"
	b := "------------------------d74496d66958873e"
	body := "--" + b + "\r\nContent-Disposition: form-data; name=\"dataset[csv]\"; filename=\"C:\\data\\pts.csv\"\r\nContent-Type: text/csv\r\n\r\nname,lat,lon\n" +
		"\r\n--" + b + "\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nx" +
		"\r\n--" + b + "\r\nContent-Disposition: form-data; name=\"overlay[kml]\"; filename=\"/tmp/a.kml\"\r\n\r\n<kml/>" +
		"\r\n--" + b + "\r\nContent-Disposition: form-data; name=\"dataset[prj]\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
		"\r\n--" + b + "--\r\n"
	q := parse(t, newReq("POST", "/datasets.json", "multipart/form-data; boundary="+b, strings.NewReader(body)), ParseOptions{})
	if got := tree(t, q.Params); got != `{"title":"x"}` {
		t.Errorf("params %s", got)
	}
	checkUploads(t, q, []wantUpload{
		{"dataset[csv]", "pts.csv", "text/csv", "name,lat,lon\n"},
		{"overlay[kml]", "a.kml", "application/octet-stream", "<kml/>"},
	})
}

func TestMultipartRuby(t *testing.T) {
	t.Parallel()
	// geoiq-ruby: a comma instead of a semicolon.
	r := newReq("POST", "/datasets.json", "multipart/form-data, boundary=89d6e3836995", strings.NewReader(rbBody()))
	q := parse(t, r, ParseOptions{MaxBody: 1 << 20})
	if len(q.Params) != 0 {
		t.Errorf("params %s", tree(t, q.Params))
	}
	checkUploads(t, q, []wantUpload{
		{"dataset[shp]", "simple.shp", "application/octet-stream", shpData},
		{"dataset[dbf]", "simple.dbf", "application/octet-stream", dbfData},
		{"dataset[shx]", "simple.shx", "application/octet-stream", shxData},
	})
}

func TestMultipartDotNet(t *testing.T) {
	t.Parallel()
	t.Run("shapefile", func(t *testing.T) {
		body := netFile("shp", "x.shp", shpData) + netFile("dbf", "x.dbf", dbfData) + netFile("shx", "x.shx", shxData) + netEnd
		r := newReq("POST", "/datasets.json?tags=a%20b%20c&name=My%20Title", "multipart/form-data; boundary="+netBoundary, strings.NewReader(body))
		r.Header.Set("Expect", "100-continue")
		q := parse(t, r, ParseOptions{MaxBody: 1 << 20})
		if got := tree(t, q.Params); got != `{"name":"My Title","tags":"a b c"}` {
			t.Errorf("params %s", got)
		}
		// Go's multipart.Reader ends cleanly at EOF after the last
		// delimiter line; the last part keeps .NET's extra CRLF.
		checkUploads(t, q, []wantUpload{
			{"overlay[shp]", "x.shp", "application/octet-stream", shpData},
			{"overlay[dbf]", "x.dbf", "application/octet-stream", dbfData},
			{"overlay[shx]", "x.shx", "application/octet-stream", shxData + "\r\n"},
		})
	})
	t.Run("wild", func(t *testing.T) {
		body := netWild("x.climgen") + netFile("wild", "x.climgen", "CLIMGEN 1\n") + netEnd
		q := parse(t, newReq("POST", "/datasets.xml", "multipart/form-data; boundary="+netBoundary, strings.NewReader(body)), ParseOptions{})
		want := `{"Filename":"x.climgen","fileext":"*.dbf;*.shx;*.prj;*.shp;*.csv;*.kml;*.rss;*.kmz;*.climgen","folder":"/",
			"overlay":{"file_key_seed":"1315531831","target_state":"complete"},"uploadify":"true","z":"z"}`
		if got := tree(t, q.Params); got != compact(t, want) {
			t.Errorf("params %s", got)
		}
		checkUploads(t, q, []wantUpload{{"overlay[wild]", "x.climgen", "application/octet-stream", "CLIMGEN 1\n\r\n"}})
	})
	t.Run("properly closed", func(t *testing.T) {
		body := netFile("csv", "x.csv", "a,b\n") + "--" + netBoundary + "--\r\n"
		q := parse(t, newReq("POST", "/datasets.json", "multipart/form-data; boundary="+netBoundary, strings.NewReader(body)), ParseOptions{})
		checkUploads(t, q, []wantUpload{{"overlay[csv]", "x.csv", "application/octet-stream", "a,b\n"}})
	})
}

func TestMultipartNested(t *testing.T) {
	t.Parallel()
	b := "XyZ"
	var body strings.Builder
	for _, kv := range [][2]string{{"layers[][source]", "finder:1"}, {"layers[][title]", "A"}, {"layers[][source]", "finder:2"}, {"User[login]", "kate"}, {"a%5Bb%5D", "raw"}} {
		fmt.Fprintf(&body, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n", b, kv[0], kv[1])
	}
	body.WriteString("--" + b + "--")
	q := parse(t, newReq("POST", "/maps.json", `multipart/form-data; boundary="XyZ"`, strings.NewReader(body.String())), ParseOptions{})
	want := `{"User":{"login":"kate"},"a%5Bb%5D":"raw","layers":[{"source":"finder:1","title":"A"},{"source":"finder:2"}]}`
	if got := tree(t, q.Params); got != compact(t, want) {
		t.Errorf("params %s", got)
	}
}

func TestMultipartErrors(t *testing.T) {
	t.Parallel()
	part := func(b, name, data string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + data + "\r\n"
	}
	var many strings.Builder
	for i := 0; i <= MaxParts; i++ {
		many.WriteString(part("B", "a[]", "1"))
	}
	many.WriteString("--B--\r\n")
	for _, c := range []struct{ name, ct, body, code, msg string }{
		{"no boundary", "multipart/form-data", part("B", "a", "1") + "--B--", mapcommons.EINVALID, "boundary"},
		{"empty boundary", "multipart/form-data; boundary=", part("B", "a", "1"), mapcommons.EINVALID, "boundary"},
		{"no delimiter at all", "multipart/form-data; boundary=B", "just some text", mapcommons.EINVALID, "malformed multipart"},
		{"wrong boundary", "multipart/form-data; boundary=C", part("B", "a", "1") + "--B--", mapcommons.EINVALID, "malformed multipart"},
		{"truncated file", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.csv\"\r\n\r\na,b\n1,2", mapcommons.EINVALID, "malformed multipart"},
		{"truncated text", "multipart/form-data; boundary=B", part("B", "a", "1") + "--B\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nxx", mapcommons.EINVALID, "malformed multipart"},
		{"text part too large", "multipart/form-data; boundary=B", part("B", "a", strings.Repeat("x", MaxTextPart+1)) + "--B--", mapcommons.EINVALID, "a: text part larger than"},
		{"too many parts", "multipart/form-data; boundary=B", many.String(), mapcommons.EINVALID, "parts"},
		{"type conflict", "multipart/form-data; boundary=B", part("B", "a", "1") + part("B", "a[b]", "2") + "--B--", mapcommons.EINVALID, "a[b]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// A file part first, so that a failure has a temp file to remove.
			body := c.body
			if b := boundaryOf(c.ct); b != "" && strings.HasPrefix(body, "--"+b+"\r\n") {
				body = "--" + b + "\r\nContent-Disposition: form-data; name=\"dataset[csv]\"; filename=\"a.csv\"\r\n\r\nx,y\n\r\n" + body
			}
			_, err := ParseRequest(newReq("POST", "/x", c.ct, strings.NewReader(body)), ParseOptions{MaxBody: 8 << 20, TempDir: dir})
			wantCode(t, err, c.code)
			if !strings.Contains(mapcommons.ErrorMessage(err), c.msg) {
				t.Errorf("message %q, want %q in it", mapcommons.ErrorMessage(err), c.msg)
			}
			emptyDir(t, dir)
		})
	}
	// Exactly MaxParts parts and exactly MaxTextPart bytes are fine.
	var ok strings.Builder
	for i := 0; i < MaxParts-1; i++ {
		ok.WriteString(part("B", "a[]", "1"))
	}
	ok.WriteString(part("B", "big", strings.Repeat("x", MaxTextPart)) + "--B--\r\n")
	q := parse(t, newReq("POST", "/x", "multipart/form-data; boundary=B", strings.NewReader(ok.String())), ParseOptions{MaxForm: 2 << 20})
	if l, _ := q.Params.List("a"); len(l) != MaxParts-1 {
		t.Errorf("%d values", len(l))
	}
}

// boundaryOf returns the boundary parameter of a Content-Type.
func boundaryOf(ct string) string {
	_, p := ParseContentType(ct)
	return p["boundary"]
}

func TestMultipartBlank(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"", "\r\n", " \r\n\t"} {
		q := parse(t, newReq("POST", "/datasets.json?title=t", "multipart/form-data; boundary=B", strings.NewReader(body)), ParseOptions{})
		if len(q.Uploads) != 0 || q.Body != nil || tree(t, q.Params) != `{"title":"t"}` {
			t.Errorf("%q: %+v", body, q)
		}
	}
	// Leading blank lines before the first delimiter are a preamble.
	q := parse(t, newReq("POST", "/x", "multipart/form-data; boundary=B", strings.NewReader("\r\n\r\n--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--")), ParseOptions{})
	if tree(t, q.Params) != `{"a":"1"}` {
		t.Errorf("params %s", tree(t, q.Params))
	}
}

func TestParseContentType(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, mt, boundary string }{
		{"multipart/form-data; boundary=abc", "multipart/form-data", "abc"},
		{"multipart/form-data, boundary=89d6e3836995", "multipart/form-data", "89d6e3836995"},
		{"Multipart/Form-Data,boundary=\"q q\"", "multipart/form-data", "q q"},
		{"multipart/form-data; boundary=" + netBoundary, "multipart/form-data", netBoundary},
		{"multipart/form-data; charset=utf-8; boundary=x", "multipart/form-data", "x"},
		{"multipart/form-data; boundary=a b; x", "multipart/form-data", "a b"},
		{"multipart/form-data;; boundary=x,y", "multipart/form-data", "x"},
		{"multipart/form-data", "multipart/form-data", ""},
		{"text/csv; charset=utf-8", "text/csv", ""},
		{"application/XML ; charset=utf-8", "application/xml", ""},
		{"text/csv;;; =", "text/csv", ""},
		{"", "", ""},
		{"garbage", "garbage", ""},
	} {
		mt, p := ParseContentType(c.in)
		if mt != c.mt || p["boundary"] != c.boundary {
			t.Errorf("ParseContentType(%q) = %q, %v; want %q boundary %q", c.in, mt, p, c.mt, c.boundary)
		}
	}
}

func TestPartNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, name, filename string
		file               bool
	}{
		{`form-data; name="title"`, "title", "", false},
		{`form-data; name="overlay[shp]" ; filename="x.shp"; `, "overlay[shp]", "x.shp", true},
		{`form-data; name="Filename" `, "Filename", "", false},
		{`form-data; name=dataset[csv]; filename=a.csv`, "dataset[csv]", "a.csv", true},
		{`form-data; name="f"; filename="C:\Documents and Settings\u\pts.csv"`, "f", `C:\Documents and Settings\u\pts.csv`, true},
		{`form-data; name="f"; filename="say \"hi\".csv"`, "f", `say "hi".csv`, true},
		{`form-data; name="f"; filename="caf%C3%A9+1.csv"`, "f", "café+1.csv", true},
		{`form-data; name="f"; filename="100%.csv"`, "f", "100%.csv", true},
		{`form-data; name="f"; filename*=UTF-8''na%C3%AFve.csv`, "f", "naïve.csv", true},
		{`form-data; name="f"; filename=""`, "f", "", true},
		{`form-data; NAME="a"; name="b"`, "a", "", false},
		{`form-data; name="unterminated`, "unterminated", "", false},
		{`form-data`, "", "", false},
		{``, "", "", false},
		{`form-data; ; =x; name`, "", "", false},
	} {
		name, filename, file := partNames(c.in)
		if name != c.name || filename != c.filename || file != c.file {
			t.Errorf("partNames(%q) = %q, %q, %v; want %q, %q, %v", c.in, name, filename, file, c.name, c.filename, c.file)
		}
	}
	for in, want := range map[string]string{`C:\a\b.shp`: "b.shp", "/tmp/x.csv": "x.csv", "a/b\\c.kml": "c.kml", "plain.csv": "plain.csv", "dir/": ""} {
		if got := fileBaseName(in); got != want {
			t.Errorf("fileBaseName(%q) = %q, want %q", in, got, want)
		}
	}
}

// fuzzBoundary is the boundary of the FuzzMultipart requests.
const fuzzBoundary = "fUzZ"

func FuzzMultipart(f *testing.F) {
	swap := func(s, b string) []byte { return []byte(strings.ReplaceAll(s, b, fuzzBoundary)) }
	f.Add(swap(rbBody(), "89d6e3836995"), uint8(1))
	f.Add(swap(netWild("x.climgen")+netFile("wild", "x.climgen", "CLIMGEN\n")+netEnd, netBoundary), uint8(0))
	f.Add(swap(netFile("shp", "x.shp", shpData)+netFile("dbf", "x.dbf", dbfData)+netEnd, netBoundary), uint8(2))
	f.Add(swap(pyBody("B0"), "B0"), uint8(0))
	f.Add([]byte("--fUzZ\r\nContent-Disposition: form-data; name=\"a[][b]\"\r\n\r\n1\r\n--fUzZ\r\nContent-Disposition: form-data; name=\"a[b]\"\r\n\r\n2\r\n--fUzZ--"), uint8(0))
	f.Add([]byte(" \r\n"), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, dialect uint8) {
		ct := [...]string{
			"multipart/form-data; boundary=" + fuzzBoundary,
			"multipart/form-data, boundary=" + fuzzBoundary,
			`multipart/form-data; boundary="` + fuzzBoundary + `"`,
		}[int(dialect)%3]
		dir := t.TempDir()
		r := newReq("POST", "/datasets.json?title=t", ct, bytes.NewReader(body))
		q, err := ParseRequest(r, ParseOptions{MaxBody: 4096, MaxForm: 2048, TempDir: dir})
		if err != nil {
			var e *mapcommons.Error
			if !errors.As(err, &e) || (e.Code != mapcommons.EINVALID && e.Code != mapcommons.ETOOLARGE) {
				t.Fatalf("error %v (%T)", err, err)
			}
			if q != nil {
				t.Fatal("a Request with an error")
			}
			emptyDir(t, dir)
			return
		}
		if len(body) > 4096 {
			t.Fatalf("%d bytes accepted with MaxBody 4096", len(body))
		}
		if q.Body != nil {
			t.Fatalf("multipart gave a Body: %+v", q.Body)
		}
		var total int64
		for _, u := range q.Uploads {
			st, err := os.Stat(u.Path)
			if err != nil || st.Size() != u.Size || filepath.Dir(u.Path) != dir {
				t.Fatalf("upload %+v: %v", u, err)
			}
			if strings.ContainsAny(u.Filename, `/\`) {
				t.Fatalf("filename %q has a directory", u.Filename)
			}
			total += u.Size
		}
		if total > int64(len(body)) {
			t.Fatalf("%d bytes of uploads from a %d byte body", total, len(body))
		}
		if _, ok := q.Params["title"]; !ok {
			t.Fatalf("query parameter lost: %s", tree(t, q.Params))
		}
		checkTree(t, map[string]any(q.Params), 0)
		q.Cleanup()
		emptyDir(t, dir)
	})
}
