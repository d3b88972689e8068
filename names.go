// names.go: the readable names by which services that list datasets by
// name (OGC API collections and their tile layers) give them.
package mapcommons

import (
	"strconv"
	"strings"
)

// maxNameTitle bounds the part of a readable name made of the title.
const maxNameTitle = 48

// ReadableName is the name of the dataset with this id and title that a
// person reads in a GIS tool's list of layers: the title in lower case,
// its runs of anything but ASCII letters and digits made one underscore,
// at most 48 bytes of it (cut at an underscore where one is near), then
// "-" and the id — "north_carolina_counties-7". The id makes it unique,
// and it alone finds the dataset (ParseReadableName), so a name given
// out before the title changed still finds it. A title with no letter or
// digit gives "dataset-7".
func ReadableName(title string, id int64) string {
	var b strings.Builder
	gap := false
	for _, c := range strings.ToLower(title) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(c)
		default:
			gap = true
		}
		if b.Len() > maxNameTitle {
			break // (one more than is kept: the cut is known)
		}
	}
	s := b.String()
	if len(s) > maxNameTitle {
		s = s[:maxNameTitle]
		if i := strings.LastIndexByte(s, '_'); i >= maxNameTitle*2/3 {
			s = s[:i]
		}
	}
	if s == "" {
		s = "dataset"
	}
	return s + "-" + strconv.FormatInt(id, 10)
}

// ParseReadableName is the id a name made by ReadableName ends with, or
// the id itself as the numeric ids have always been read: false for
// anything else (a title part of other characters or longer than
// ReadableName makes, an id not in its plain decimal form, 0).
func ParseReadableName(name string) (int64, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		if id, err := strconv.ParseInt(name, 10, 64); err == nil && id > 0 {
			return id, true
		}
		return 0, false
	}
	prefix, num := name[:i], name[i+1:]
	if prefix == "" || len(prefix) > maxNameTitle || num == "" || num[0] == '0' {
		return 0, false
	}
	for _, c := range []byte(prefix + num) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return 0, false
		}
	}
	if id, err := strconv.ParseInt(num, 10, 64); err == nil && id > 0 {
		return id, true
	}
	return 0, false
}

// ReadableName is the dataset's readable name (the function ReadableName).
func (d *Dataset) ReadableName() string { return ReadableName(d.Title, d.ID) }
