// png.go: the PNG encoder of drawn images. image/png spends four times
// as long encoding a 1024×768 map as drawing it (it tries five filters on
// every row and deflates with the standard library's compressor); this
// one writes each row with the Sub filter, which suits the flat colours of
// a map, deflates with klauspost/compress at its fastest level, and writes
// an opaque image as RGB (a quarter smaller before compression). The
// result is a valid PNG that image/png and GDAL read to the same pixels.
package render

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"image"
	"io"

	"github.com/klauspost/compress/zlib"
)

// pngSignature starts every PNG file.
var pngSignature = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// encodePNG writes img (premultiplied RGBA) as an 8-bit PNG: RGB when
// every pixel is opaque, else RGBA with the colours un-premultiplied.
func encodePNG(w io.Writer, img *image.RGBA) error {
	b := img.Bounds()
	width, height := b.Dx(), b.Dy()
	opaque := img.Opaque()
	bpp := 4
	colourType := byte(6) // RGBA
	if opaque {
		bpp, colourType = 3, 2 // RGB
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.Write(pngSignature); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, colourType // bit depth 8; compression, filter, interlace 0
	if err := writeChunk(bw, "IHDR", ihdr[:]); err != nil {
		return err
	}
	idat := &chunkWriter{w: bw, name: "IDAT", buf: make([]byte, 0, 64<<10)}
	zw, err := zlib.NewWriterLevel(idat, zlib.BestSpeed)
	if err != nil {
		return err
	}
	row := make([]byte, 1+width*bpp)
	row[0] = 1 // Sub: each byte less the same byte of the pixel to its left
	for y := 0; y < height; y++ {
		src := img.Pix[(y+b.Min.Y-img.Rect.Min.Y)*img.Stride+(b.Min.X-img.Rect.Min.X)*4:]
		out := row[1:]
		var pr, pg, pb, pa byte
		for x := 0; x < width; x++ {
			r, g, bl, a := src[4*x], src[4*x+1], src[4*x+2], src[4*x+3]
			if a != 255 && a != 0 {
				// Premultiplied to straight, as color.NRGBAModel does.
				a16 := uint32(a) * 0x101
				r = byte(uint32(r) * 0x101 * 0xffff / a16 >> 8)
				g = byte(uint32(g) * 0x101 * 0xffff / a16 >> 8)
				bl = byte(uint32(bl) * 0x101 * 0xffff / a16 >> 8)
			} else if a == 0 {
				r, g, bl = 0, 0, 0
			}
			o := out[x*bpp:]
			o[0], o[1], o[2] = r-pr, g-pg, bl-pb
			if !opaque {
				o[3] = a - pa
			}
			pr, pg, pb, pa = r, g, bl, a
		}
		if _, err := zw.Write(row); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := idat.flush(); err != nil {
		return err
	}
	if err := writeChunk(bw, "IEND", nil); err != nil {
		return err
	}
	return bw.Flush()
}

// writeChunk writes one PNG chunk: length, name, data, CRC.
func writeChunk(w io.Writer, name string, data []byte) error {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
	copy(head[4:], name)
	crc := crc32.NewIEEE()
	crc.Write(head[4:])
	crc.Write(data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc.Sum32())
	for _, p := range [][]byte{head[:], data, tail[:]} {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// chunkWriter gathers what is written into chunks of up to cap(buf) bytes.
type chunkWriter struct {
	w    io.Writer
	name string
	buf  []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), cap(c.buf)-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == cap(c.buf) {
			if err := c.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	err := writeChunk(c.w, c.name, c.buf)
	c.buf = c.buf[:0]
	return err
}
