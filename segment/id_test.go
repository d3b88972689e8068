package segment

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// writeIDs writes one point feature per id (0: let the writer give one),
// raising the next id to next before finishing, and opens the segment.
func writeIDs(t *testing.T, ids []int64, next int64) (*Segment, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(dir, testAttrs[:1])
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		f := &mapcommons.Feature{ID: id, Values: []any{int64(i)}, Geometry: wkb.AppendPoint(nil, float64(i), float64(i))}
		if err := w.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	w.SetNextID(next)
	path := filepath.Join(dir, "x.seg")
	if _, err := w.Finish(path); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// idsOf lists the ids of the features q selects, in order.
func idsOf(t *testing.T, s *Segment, q *mapcommons.FeatureQuery) []int64 {
	t.Helper()
	var got []int64
	err := s.Query(context.Background(), q, func(f *mapcommons.Feature) error {
		got = append(got, f.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestStoredIDs(t *testing.T) {
	// Given ids are kept, missing ones come from the next id, and the
	// high-water mark set by SetNextID is given next and survives.
	dir := t.TempDir()
	w, err := NewWriter(dir, testAttrs[:1])
	if err != nil {
		t.Fatal(err)
	}
	add := func(id int64) error {
		return w.Add(&mapcommons.Feature{ID: id, Values: []any{id}})
	}
	for _, id := range []int64{0, 0, 5, 0} {
		if err := add(id); err != nil {
			t.Fatal(err)
		}
	}
	if w.LastID() != 6 {
		t.Fatalf("last id %d, want 6", w.LastID())
	}
	// Ids that do not increase are refused, and leave the writer usable.
	for _, id := range []int64{6, 3, -1, math.MaxInt64} {
		if err := add(id); err == nil {
			t.Fatalf("id %d after 6 accepted", id)
		}
	}
	w.SetNextID(20)
	w.SetNextID(10) // never lowers it
	for _, id := range []int64{0, 25} {
		if err := add(id); err != nil {
			t.Fatal(err)
		}
	}
	w.SetNextID(30)
	path := filepath.Join(dir, "x.seg")
	if _, err := w.Finish(path); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []int64{1, 2, 5, 6, 20, 25}
	var f mapcommons.Feature
	for pos, id := range want {
		s.Read(pos, &f)
		if s.ID(pos) != id || f.ID != id {
			t.Fatalf("position %d: id %d (read %d), want %d", pos, s.ID(pos), f.ID, id)
		}
		if p, ok := s.Position(id); !ok || p != pos {
			t.Fatalf("Position(%d) = %d %v, want %d", id, p, ok, pos)
		}
	}
	if s.Len() != len(want) || s.NextID() != 30 {
		t.Fatalf("len %d, next id %d", s.Len(), s.NextID())
	}
	for _, id := range []int64{-1, 0, 3, 7, 24, 26, 30} {
		if p, ok := s.Position(id); ok {
			t.Fatalf("Position(%d) = %d", id, p)
		}
	}
	if got := idsOf(t, s, &mapcommons.FeatureQuery{Limit: -1, IDs: []int64{25, 3, 1, 25, 6}}); !slices.Equal(got, []int64{1, 6, 25}) {
		t.Fatalf("ids %v, want [1 6 25]", got)
	}
}

func TestNextIDOfEmptySegment(t *testing.T) {
	// Deleting every feature keeps the dataset's high-water mark.
	s, _ := writeIDs(t, nil, 8)
	if s.Len() != 0 || s.NextID() != 8 {
		t.Fatalf("len %d, next id %d, want 0, 8", s.Len(), s.NextID())
	}
	if s, _ := writeIDs(t, []int64{0, 0}, 0); s.NextID() != 3 || s.ID(1) != 2 {
		t.Fatalf("next id %d, id %d, want 3, 2", s.NextID(), s.ID(1))
	}
}

// editFile edits the segment file at path: its bytes in place, and its
// JSON header.
func editFile(t *testing.T, path string, edit func(data []byte, h *header)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := len(data)
	hl := int(binary.LittleEndian.Uint64(data[size-16:]))
	var h header
	if err := json.Unmarshal(data[size-16-hl:size-16], &h); err != nil {
		t.Fatal(err)
	}
	edit(data, &h)
	hb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out := append(data[:size-16-hl:size-16-hl], hb...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(hb)))
	if err := os.WriteFile(path, append(out, magic...), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSegmentWithoutIDs(t *testing.T) {
	// A file written before ids were stored: ids are positions plus one.
	s, path := writeIDs(t, []int64{3, 9, 12, 40}, 50)
	s.Close()
	editFile(t, path, func(_ []byte, h *header) {
		delete(h.Sections, "ids")
		h.NextID = 0
	})
	old, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if old.NextID() != 5 || old.ID(0) != 1 || old.ID(3) != 4 {
		t.Fatalf("next id %d, ids %d..%d", old.NextID(), old.ID(0), old.ID(3))
	}
	if p, ok := old.Position(4); !ok || p != 3 {
		t.Fatalf("Position(4) = %d %v", p, ok)
	}
	for _, id := range []int64{0, 5, -3} {
		if _, ok := old.Position(id); ok {
			t.Fatalf("Position(%d) found", id)
		}
	}
	if got := idsOf(t, old, &mapcommons.FeatureQuery{Limit: -1, IDs: []int64{4, 2, 9}}); !slices.Equal(got, []int64{2, 4}) {
		t.Fatalf("ids %v, want [2 4]", got)
	}
}

func TestCorruptIDs(t *testing.T) {
	for name, edit := range map[string]func(data []byte, h *header){
		"decreasing": func(data []byte, h *header) {
			off := h.Sections["ids"][0]
			binary.LittleEndian.PutUint64(data[off+8:], 2) // 3, 2, 12, 40
		},
		"zero": func(data []byte, h *header) {
			binary.LittleEndian.PutUint64(data[h.Sections["ids"][0]:], 0)
		},
		"next id not above": func(data []byte, h *header) { h.NextID = 40 },
		"short section": func(data []byte, h *header) {
			h.Sections["ids"] = [2]int64{h.Sections["ids"][0], 24}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, path := writeIDs(t, []int64{3, 9, 12, 40}, 50)
			s.Close()
			editFile(t, path, edit)
			if s, err := Open(path); err == nil {
				s.Close()
				t.Fatal("opened")
			} else if !strings.Contains(err.Error(), "corrupt") {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func TestQueryIDsSparse(t *testing.T) {
	// Ids with gaps, through every path of a query: position order (both
	// ways, paged), the index, an attribute sort and a grouping.
	ids := make([]int64, 300)
	for i := range ids {
		ids[i] = int64(3*i + 2)
	}
	s, _ := writeIDs(t, ids, 0)
	ask := []int64{2, 5, 6, 299, 302, 896, 897, 1000}
	cases := []struct {
		q    mapcommons.FeatureQuery
		want []int64
	}{
		{mapcommons.FeatureQuery{Limit: -1}, []int64{2, 5, 299, 302, 896}},
		{mapcommons.FeatureQuery{Limit: -1, Descending: true}, []int64{896, 302, 299, 5, 2}},
		{mapcommons.FeatureQuery{Limit: 2, Offset: 1}, []int64{5, 299}},
		{mapcommons.FeatureQuery{Limit: -1, BBox: &mapcommons.BBox{W: 0.5, S: 0.5, E: 120, N: 120}}, []int64{5, 299, 302}},
		{mapcommons.FeatureQuery{Limit: -1, Sort: "n", Descending: true}, []int64{896, 302, 299, 5, 2}},
		{mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"1"}}}}, []int64{5, 299, 302, 896}},
		{mapcommons.FeatureQuery{Limit: -1, IDs: []int64{}}, nil},
	}
	for i, c := range cases {
		q := c.q
		if q.IDs == nil {
			q.IDs = ask
		}
		if got := idsOf(t, s, &q); !slices.Equal(got, c.want) {
			t.Errorf("case %d: ids %v, want %v", i, got, c.want)
		}
	}
	groups, err := s.Groups(context.Background(), &mapcommons.FeatureQuery{Limit: -1, IDs: ask})
	if err != nil || len(groups) != 1 || groups[0].Count != 5 {
		t.Fatalf("groups %+v %v", groups, err)
	}
}

// BenchmarkQueryByID finds one feature by id among 1,000,000, by binary
// search, against finding it by an attribute holding the same number (a
// scan of the column): go test -run X -bench QueryByID ./segment/
func BenchmarkQueryByID(b *testing.B) {
	const n = 1000000
	dir := b.TempDir()
	w, err := NewWriter(dir, testAttrs[:1])
	if err != nil {
		b.Fatal(err)
	}
	f := &mapcommons.Feature{Values: make([]any, 1)}
	for i := range n {
		f.ID, f.Values[0] = int64(2*i+1), int64(2*i+1) // ids with gaps
		f.Geometry = wkb.AppendPoint(f.Geometry[:0], float64(i%360)-180, float64(i%170)-85)
		if err := w.Add(f); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(dir, "x.seg")
	if _, err := w.Finish(path); err != nil {
		b.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(5, 6))
	for _, mode := range []string{"ID", "Attribute"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				id := int64(2*r.IntN(n) + 1)
				q := &mapcommons.FeatureQuery{Limit: -1, IDs: []int64{id}}
				if mode == "Attribute" {
					q = &mapcommons.FeatureQuery{Limit: -1, Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpEquals, Values: []string{strconv.FormatInt(id, 10)}}}}
				}
				found := 0
				if err := s.Query(b.Context(), q, func(f *mapcommons.Feature) error {
					if f.ID != id {
						b.Fatalf("id %d, want %d", f.ID, id)
					}
					found++
					return nil
				}); err != nil || found != 1 {
					b.Fatal(found, err)
				}
			}
		})
	}
}
