package archive

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"mapcommons"
)

func makeZip(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func code(err error) string {
	var e *mapcommons.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestArchive(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		b := makeZip(t, map[string]string{"a/doc.kml": "<kml/>", "__MACOSX/a/._doc.kml": "x"})
		a, err := Open(bytes.NewReader(b), int64(len(b)), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range a.Files() {
			if Hidden(f.Name) {
				continue
			}
			rc, err := a.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, f.Name+"="+string(body)+" "+Ext(f.Name))
		}
		if strings.Join(got, ",") != "a/doc.kml=<kml/> kml" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("OKBudgetExactlySpent", func(t *testing.T) {
		b := makeZip(t, map[string]string{"x.txt": "12345"})
		a, _ := Open(bytes.NewReader(b), int64(len(b)), Limits{MaxBytes: 5})
		rc, _ := a.Open(a.Files()[0])
		if body, err := io.ReadAll(rc); err != nil || string(body) != "12345" {
			t.Errorf("%q %v", body, err)
		}
	})
	t.Run("ErrBomb", func(t *testing.T) {
		b := makeZip(t, map[string]string{"zeros.dbf": strings.Repeat("\x00", 1<<20)})
		a, err := Open(bytes.NewReader(b), int64(len(b)), Limits{MaxBytes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Extract(a.Files()[0], t.TempDir())
		if code(err) != mapcommons.ETOOLARGE {
			t.Errorf("err %v, want ETOOLARGE", err)
		}
	})
	t.Run("ErrTooManyEntries", func(t *testing.T) {
		b := makeZip(t, map[string]string{"a": "", "b": "", "c": ""})
		if _, err := Open(bytes.NewReader(b), int64(len(b)), Limits{MaxEntries: 2}); code(err) != mapcommons.ETOOLARGE {
			t.Errorf("err %v", err)
		}
	})
	t.Run("ErrUnsafeName", func(t *testing.T) {
		for _, name := range []string{"../evil.shp", "/abs.shp", `a\..\b.shp`} {
			b := makeZip(t, map[string]string{name: "x"})
			if _, err := Open(bytes.NewReader(b), int64(len(b)), Limits{}); code(err) != mapcommons.EINVALID {
				t.Errorf("%s: err %v", name, err)
			}
		}
	})
	t.Run("ErrNotZip", func(t *testing.T) {
		b := []byte("PK\x03\x04 but not really")
		if _, err := Open(bytes.NewReader(b), int64(len(b)), Limits{}); code(err) != mapcommons.EINVALID {
			t.Errorf("err %v", err)
		}
	})
}

func FuzzArchive(f *testing.F) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("a.shp")
	w.Write(bytes.Repeat([]byte("ab"), 100))
	zw.Close()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Open(bytes.NewReader(b), int64(len(b)), Limits{MaxBytes: 1 << 16})
		if err != nil {
			return
		}
		for _, fl := range a.Files() {
			rc, err := a.Open(fl)
			if err != nil {
				continue
			}
			io.Copy(io.Discard, rc)
			rc.Close()
		}
	})
}
