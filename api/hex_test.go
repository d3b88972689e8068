package api

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzAppendUpperHex: the WKB of the flat form is hex.EncodeToString's,
// in upper case, after what dst held.
func FuzzAppendUpperHex(f *testing.F) {
	f.Add([]byte("prefix"), []byte{0x01, 0x01, 0, 0, 0, 0xab, 0xff})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, dst, b []byte) {
		dst, b = bytes.Clone(dst), bytes.Clone(b) // a geometry never shares the answer's buffer
		want := string(dst) + strings.ToUpper(hex.EncodeToString(b))
		if got := string(appendUpperHex(dst, b)); got != want {
			t.Fatalf("%q, want %q", got, want)
		}
	})
}
