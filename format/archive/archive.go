// Package archive opens the zip files users upload (a zipped shapefile, a
// KMZ) defensively: a bounded number of entries, no entry names that climb
// out of the archive, and a bound on the bytes they expand to that is
// enforced on the bytes actually read, not on the sizes the archive claims,
// so that a zip bomb stops with a clear error after at most that many bytes.
package archive

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"mapcommons"
)

// Limits bound what an archive may hold.
type Limits struct {
	MaxEntries int   // entries in the central directory; 0 means 10,000
	MaxBytes   int64 // bytes all extracted entries expand to together; 0 means 2 GiB
}

func (l Limits) entries() int {
	if l.MaxEntries <= 0 {
		return 10000
	}
	return l.MaxEntries
}

func (l Limits) bytes() int64 {
	if l.MaxBytes <= 0 {
		return 2 << 30
	}
	return l.MaxBytes
}

// Archive is an opened zip file.
type Archive struct {
	zr    *zip.Reader
	left  int64 // bytes that extraction may still produce
	files []*zip.File
}

// Open reads the directory of the zip file in ra. A file that is not a
// zip, or breaks the limits, is EINVALID (ETOOLARGE for size limits).
func Open(ra io.ReaderAt, size int64, lim Limits) (*Archive, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "not a readable zip file: %v", err)
	}
	if len(zr.File) > lim.entries() {
		return nil, mapcommons.Errorf(mapcommons.ETOOLARGE, "the zip file holds %d entries, more than %d", len(zr.File), lim.entries())
	}
	a := &Archive{zr: zr, left: lim.bytes()}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if !safeName(f.Name) {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "the zip file holds an entry with an unsafe name %q", f.Name)
		}
		a.files = append(a.files, f)
	}
	return a, nil
}

// safeName reports whether an entry name stays inside the archive.
func safeName(name string) bool {
	if name == "" || strings.ContainsRune(name, 0) || strings.Contains(name, `\`) || path.IsAbs(name) {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}

// Files returns the archive's regular entries, in directory order.
func (a *Archive) Files() []*zip.File { return a.files }

// Hidden reports whether an entry is metadata a desktop added rather than
// the user's data: under __MACOSX/, or a dot file (._name, .DS_Store).
func Hidden(name string) bool {
	if strings.HasPrefix(name, "__MACOSX/") {
		return true
	}
	return strings.HasPrefix(path.Base(name), ".")
}

// Ext returns an entry's extension, lower case, without the dot.
func Ext(name string) string {
	return strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
}

// Open returns a reader of an entry's content that fails with ETOOLARGE
// once the archive's byte budget is spent, and with EINVALID on a corrupt
// entry.
func (a *Archive) Open(f *zip.File) (io.ReadCloser, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s in the zip file: %v", f.Name, err)
	}
	return &budgetReader{rc: rc, a: a, name: f.Name}, nil
}

type budgetReader struct {
	rc   io.ReadCloser
	a    *Archive
	name string
}

func (r *budgetReader) Read(p []byte) (int, error) {
	if r.a.left <= 0 {
		// One byte more tells a spent budget from an entry that ends on it.
		var one [1]byte
		n, err := io.ReadFull(r.rc, one[:])
		if n > 0 {
			return 0, mapcommons.Errorf(mapcommons.ETOOLARGE, "the zip file expands to more than its limit of bytes")
		}
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return 0, io.EOF
		}
		return 0, mapcommons.Errorf(mapcommons.EINVALID, "%s in the zip file: %v", r.name, err)
	}
	if int64(len(p)) > r.a.left {
		p = p[:r.a.left]
	}
	n, err := r.rc.Read(p)
	r.a.left -= int64(n)
	if err != nil && err != io.EOF {
		return n, mapcommons.Errorf(mapcommons.EINVALID, "%s in the zip file: %v", r.name, err)
	}
	return n, err
}

func (r *budgetReader) Close() error { return r.rc.Close() }

// Extract copies an entry into a new file in dir and returns its path.
func (a *Archive) Extract(f *zip.File, dir string) (string, error) {
	rc, err := a.Open(f)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	out, err := os.CreateTemp(dir, "entry-*."+Ext(f.Name))
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		os.Remove(out.Name())
		return "", err
	}
	if err := out.Close(); err != nil {
		os.Remove(out.Name())
		return "", fmt.Errorf("archive: %w", err)
	}
	return out.Name(), nil
}
