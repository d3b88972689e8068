package geojson

import (
	"io"
	"strconv"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Writer streams a FeatureCollection: Begin, Write for each feature, End.
// It buffers up to about 64 KiB before writing through.
type Writer struct {
	w     io.Writer
	attrs []mapcommons.Attribute
	keys  [][]byte
	buf   []byte
	n     int
	// DistanceKey, when set, is the property that carries Feature.Distance.
	DistanceKey string
}

const flushAt = 64 << 10

// NewWriter returns a writer of features with the given attributes.
func NewWriter(w io.Writer, attrs []mapcommons.Attribute) *Writer {
	return &Writer{w: w, attrs: attrs, keys: Keys(attrs), buf: make([]byte, 0, 8<<10)} // grows to flushAt for large answers
}

// Begin writes the opening of the collection; members, when not empty, are
// extra members written before "features" (a JSON fragment such as
// `"columns":["a","b"],`, with its trailing comma).
func (w *Writer) Begin(members []byte) {
	w.buf = append(w.buf, `{"type":"FeatureCollection",`...)
	w.buf = append(w.buf, members...)
	w.buf = append(w.buf, `"features":[`...)
}

// AppendFeature appends one GeoJSON Feature object: id (the feature's
// stable id, Feature.ID; left out when it is 0, as in features read from an
// upload), geometry, and the attributes as properties (keys from Keys of
// attrs; with the feature's distance under distKey when that is not empty).
func AppendFeature(dst []byte, keys [][]byte, attrs []mapcommons.Attribute, f *mapcommons.Feature, distKey string) ([]byte, error) {
	dst = append(dst, `{"type":"Feature",`...)
	if f.ID != 0 {
		dst = append(dst, `"id":`...)
		dst = strconv.AppendInt(dst, f.ID, 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"geometry":`...)
	var err error
	if dst, err = wkb.ToGeoJSON(dst, f.Geometry); err != nil {
		return dst, err
	}
	dst = append(dst, `,"properties":{`...)
	dst = AppendFeatureMembers(dst, keys, attrs, f)
	if distKey != "" {
		if len(keys) > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, distKey)
		dst = append(dst, ':')
		dst = AppendValue(dst, f.Distance)
	}
	return append(dst, '}', '}'), nil
}

// Write appends one feature.
func (w *Writer) Write(f *mapcommons.Feature) error {
	if w.n > 0 {
		w.buf = append(w.buf, ',')
	}
	w.n++
	var err error
	if w.buf, err = AppendFeature(w.buf, w.keys, w.attrs, f, w.DistanceKey); err != nil {
		return err
	}
	if len(w.buf) >= flushAt {
		return w.flush()
	}
	return nil
}

// End closes the collection and flushes.
func (w *Writer) End() error {
	w.buf = append(w.buf, ']', '}')
	return w.flush()
}

func (w *Writer) flush() error {
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}
