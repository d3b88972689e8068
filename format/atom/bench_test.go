package atom

import (
	"bytes"
	"fmt"
	"testing"

	"mapcommons/internal/formattest"
)

// bigFeed is an RSS feed of n items with a point, a title, a description
// and two extension elements.
func bigFeed(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?><rss version="2.0" xmlns:georss="http://www.georss.org/georss"><channel><title>t</title>`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<item><title>Item %d</title><description>Some &lt;b&gt;text&lt;/b&gt; about item %d</description><mag>%d.5</mag><place>Town %d</place><georss:point>%d.25 %d.125</georss:point></item>\n", i, i, i%10, i, i%90, i%180)
	}
	b.WriteString("</channel></rss>")
	return b.Bytes()
}

func BenchmarkRead(b *testing.B) {
	formattest.BenchmarkRead(b, bigFeed(10000), Open)
}
