package segment

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"slices"

	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// The spatial index is built out of core, so that the memory of an ingest
// does not grow with the number of features. As features come, Add spools
// one record per feature with a box (the box and the position) to a
// temporary file. Finish, which only then knows the extent the Hilbert
// values are taken on, reads them back in runs of at most runItems, sorts
// each run in memory and spills it, merges the runs (fanIn at a time) into
// the leaves, and builds each level above from the one below, read back
// from disk. The arrays are those of the in-memory build (the same order,
// the same nodes), written to the four tree sections. A small writer's
// "temporary files" are in memory (write.go's spillAt): the same build,
// reading back from memory.

const (
	itemSize   = 36 // minx, miny, maxx, maxy, position
	runRecSize = 8 + itemSize
	// defaultRunItems items are sorted in memory at a time: 24 MiB.
	defaultRunItems = 1 << 19
	// defaultFanIn runs are merged at a time (each with a 32 KiB buffer).
	defaultFanIn = 64
)

// putItem appends the spooled form of an item (without its key).
func putItem(b []byte, it *item) []byte {
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(it.box.MinX))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(it.box.MinY))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(it.box.MaxX))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(it.box.MaxY))
	return binary.LittleEndian.AppendUint32(b, it.pos)
}

// getItem reads the spooled form of an item.
func getItem(b []byte, it *item) {
	le := binary.LittleEndian
	it.box = wkb.Rect{
		MinX: math.Float64frombits(le.Uint64(b[0:])), MinY: math.Float64frombits(le.Uint64(b[8:])),
		MaxX: math.Float64frombits(le.Uint64(b[16:])), MaxY: math.Float64frombits(le.Uint64(b[24:])),
	}
	it.pos = le.Uint32(b[32:])
}

func compareItems(a, b item) int {
	switch {
	case a.key < b.key:
		return -1
	case a.key > b.key:
		return 1
	case a.pos < b.pos:
		return -1
	case a.pos > b.pos:
		return 1
	}
	return 0
}

// nodeOut appends nodes to the four tree sections.
type nodeOut struct {
	boxes, ids, minPos, maxPos *section
	n                          int // nodes written
	buf                        [32]byte
}

func (o *nodeOut) put(b wkb.Rect, id, lo, hi uint32) {
	le := binary.LittleEndian
	le.PutUint64(o.buf[0:], math.Float64bits(b.MinX))
	le.PutUint64(o.buf[8:], math.Float64bits(b.MinY))
	le.PutUint64(o.buf[16:], math.Float64bits(b.MaxX))
	le.PutUint64(o.buf[24:], math.Float64bits(b.MaxY))
	o.boxes.write(o.buf[:32])
	le.PutUint32(o.buf[0:], id)
	o.ids.write(o.buf[:4])
	le.PutUint32(o.buf[0:], lo)
	o.minPos.write(o.buf[:4])
	le.PutUint32(o.buf[0:], hi)
	o.maxPos.write(o.buf[:4])
	o.n++
}

func (o *nodeOut) leaf(it *item) { o.put(it.box, it.pos, it.pos, it.pos) }

// buildIndex builds the tree from the spooled items into w.tree and sets
// w.levels. The temporary files it makes are removed as soon as they have
// been read, and by Abort whatever happens.
func (w *Writer) buildIndex() error {
	var err error
	o := &nodeOut{}
	for i, name := range []string{"tree.boxes", "tree.ids", "tree.minpos", "tree.maxpos"} {
		if w.tree[i], err = w.temp(name); err != nil {
			return err
		}
	}
	o.boxes, o.ids, o.minPos, o.maxPos = w.tree[0], w.tree[1], w.tree[2], w.tree[3]
	n := w.nItems
	if n == 0 {
		w.drop(w.items)
		return nil
	}
	var r io.Reader
	if w.items.inMem {
		r = bytes.NewReader(w.items.mem)
	} else {
		if err := w.items.rewind(); err != nil {
			return err
		}
		r = bufio.NewReaderSize(w.items.f, 256<<10)
	}
	buf := make([]item, 0, min(n, w.runItems))
	var rec [runRecSize]byte
	var runs []*section
	for read := 0; read < n; {
		buf = buf[:0]
		for len(buf) < cap(buf) && read < n {
			if _, err := io.ReadFull(r, rec[:itemSize]); err != nil {
				return err
			}
			var it item
			getItem(rec[:itemSize], &it)
			it.key = spatial.HilbertKey(it.box, w.extent)
			buf = append(buf, it)
			read++
		}
		slices.SortFunc(buf, compareItems)
		if read == n && len(runs) == 0 { // one run: straight to the leaves
			for i := range buf {
				o.leaf(&buf[i])
			}
			break
		}
		run, err := w.run()
		if err != nil {
			return err
		}
		for i := range buf {
			b := binary.LittleEndian.AppendUint64(rec[:0], buf[i].key)
			run.write(putItem(b, &buf[i]))
		}
		if err := run.close(); err != nil {
			return err
		}
		runs = append(runs, run)
	}
	buf = nil
	w.drop(w.items)
	if w.hook != nil {
		if err := w.hook("runs"); err != nil {
			return err
		}
	}
	// Merge fanIn runs into one until one merge makes the leaves.
	for len(runs) > w.fanIn {
		out, err := w.run()
		if err != nil {
			return err
		}
		err = w.merge(runs[:w.fanIn], func(it *item) {
			b := binary.LittleEndian.AppendUint64(rec[:0], it.key)
			out.write(putItem(b, it))
		})
		if err == nil {
			err = out.close()
		}
		if err != nil {
			return err
		}
		runs = append(runs[w.fanIn:], out)
	}
	if len(runs) > 0 {
		if err := w.merge(runs, o.leaf); err != nil {
			return err
		}
	}
	return w.buildLevels(o, n)
}

// run starts a sorted run. Runs are written one at a time, through one
// buffer.
func (w *Writer) run() (*section, error) {
	f, err := os.CreateTemp(w.dir, "seg-*.part")
	if err != nil {
		return nil, err
	}
	if w.runBuf == nil {
		w.runBuf = bufio.NewWriterSize(f, 64<<10)
	}
	w.runBuf.Reset(f)
	s := &section{name: "run", path: f.Name(), f: f, w: w.runBuf}
	w.temps = append(w.temps, s)
	return s, nil
}

// close flushes a finished run, gives its buffer back and closes its file
// until its merge, so that only the runs of one merge hold descriptors.
func (s *section) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.w, s.f = nil, nil
	return err
}

// part returns a reader of n bytes of the section from off, buffered by
// bufSize bytes when spooled. The section may grow meanwhile.
func (s *section) part(off, n int64, bufSize int) (io.Reader, error) {
	if s.inMem {
		return bytes.NewReader(s.mem[off : off+n]), nil
	}
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	return bufio.NewReaderSize(io.NewSectionReader(s.f, off, n), bufSize), nil
}

// runReader reads a sorted run back.
type runReader struct {
	r    *bufio.Reader
	left int64
	cur  item
	rec  [runRecSize]byte
}

func (rr *runReader) next() (bool, error) {
	if rr.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(rr.r, rr.rec[:]); err != nil {
		return false, err
	}
	rr.left--
	rr.cur.key = binary.LittleEndian.Uint64(rr.rec[:8])
	getItem(rr.rec[8:], &rr.cur)
	return true, nil
}

// merge calls emit with the items of sorted runs in order, and removes the
// runs.
func (w *Writer) merge(runs []*section, emit func(*item)) error {
	defer func() {
		for _, s := range runs {
			w.drop(s)
		}
	}()
	h := make([]*runReader, 0, len(runs))
	for i, s := range runs {
		f, err := os.Open(s.path)
		if err != nil {
			return err
		}
		s.f = f
		if i == len(w.runReaders) {
			w.runReaders = append(w.runReaders, bufio.NewReaderSize(s.f, 32<<10))
		}
		w.runReaders[i].Reset(s.f)
		rr := &runReader{r: w.runReaders[i], left: s.size / runRecSize}
		if ok, err := rr.next(); err != nil {
			return err
		} else if ok {
			h = append(h, rr)
		}
	}
	less := func(i, j int) bool { return compareItems(h[i].cur, h[j].cur) < 0 }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && less(r, l) {
				l = r
			}
			if !less(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		emit(&h[0].cur)
		ok, err := h[0].next()
		if err != nil {
			return err
		}
		if !ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return nil
}

// buildLevels appends the inner levels above the n leaves o holds, each
// read back from the level below: one node per nodeSize nodes, its id the
// index of its first child.
func (w *Writer) buildLevels(o *nodeOut, n int) error {
	w.levels = append(w.levels, n)
	start, end := 0, n
	for end-start > 1 {
		count := int64(end - start)
		boxes, err := o.boxes.part(32*int64(start), 32*count, 64<<10)
		if err != nil {
			return err
		}
		los, err := o.minPos.part(4*int64(start), 4*count, 16<<10)
		if err != nil {
			return err
		}
		his, err := o.maxPos.part(4*int64(start), 4*count, 16<<10)
		if err != nil {
			return err
		}
		var b [32]byte
		for i := start; i < end; i += nodeSize {
			r := wkb.EmptyRect
			lo, hi := uint32(math.MaxUint32), uint32(0)
			for j := i; j < min(i+nodeSize, end); j++ {
				if _, err := io.ReadFull(boxes, b[:32]); err != nil {
					return err
				}
				r = r.Extend(wkb.Rect{
					MinX: math.Float64frombits(binary.LittleEndian.Uint64(b[0:])), MinY: math.Float64frombits(binary.LittleEndian.Uint64(b[8:])),
					MaxX: math.Float64frombits(binary.LittleEndian.Uint64(b[16:])), MaxY: math.Float64frombits(binary.LittleEndian.Uint64(b[24:])),
				})
				if _, err := io.ReadFull(los, b[:4]); err != nil {
					return err
				}
				lo = min(lo, binary.LittleEndian.Uint32(b[:4]))
				if _, err := io.ReadFull(his, b[:4]); err != nil {
					return err
				}
				hi = max(hi, binary.LittleEndian.Uint32(b[:4]))
			}
			o.put(r, uint32(i), lo, hi)
		}
		start, end = end, o.n
		w.levels = append(w.levels, end)
	}
	return nil
}
