package params

// multipart/form-data bodies in the three dialects real clients send
// (wire contract 1.1):
//
//   - standard (curl, Python urllib/poster): Content-Type
//     "multipart/form-data; boundary=...";
//   - Ruby (geoiq-ruby shp_upload): Content-Type
//     "multipart/form-data, boundary=89d6e3836995", a comma where the
//     semicolon belongs, which mime.ParseMediaType rejects;
//   - .NET (GeoIQ4Net): part headers like
//     `form-data; name="overlay[shp]" ; filename="x.shp"; ` and a body
//     that ends with "\r\n--<boundary>\r\n" instead of "--<boundary>--".
//     Go's multipart.Reader returns the parts and then a clean io.EOF
//     (the missing part headers after the last delimiter read as end of
//     input), which is taken as the end of the form. The last part's data
//     keeps one extra trailing "\r\n" (.NET writes data CRLF, then
//     CRLF--boundary CRLF); it is left as sent: CSV and KML readers do
//     not mind, and shapefile parts carry their own lengths.

import (
	"bufio"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"mapcommons"
)

// Limits of the multipart parser.
const (
	// MaxParts is the number of parts accepted in one multipart body.
	MaxParts = 1000
	// MaxTextPart is the size of one text (non-file) part.
	MaxTextPart = 1 << 20
)

// ParseContentType parses a Content-Type header leniently: the media type in
// lower case without parameters, and the parameters. A comma after the
// media type is read as the semicolon it should be (Ruby's
// "multipart/form-data, boundary=..."); when the header still does not
// parse, the media type is what precedes the first ';' or ',' and the
// boundary is found the way Rack did (/boundary="?([^";,]+)"?/i).
func ParseContentType(ct string) (string, map[string]string) {
	ct = strings.TrimSpace(ct)
	if ct == "" {
		return "", nil
	}
	if mt, params, err := mime.ParseMediaType(ct); err == nil {
		return mt, params
	}
	if i := strings.IndexAny(ct, ";,"); i >= 0 && ct[i] == ',' {
		if mt, params, err := mime.ParseMediaType(ct[:i] + ";" + ct[i+1:]); err == nil {
			return mt, params
		}
	}
	base := ct
	if i := strings.IndexAny(ct, ";,"); i >= 0 {
		base = ct[:i]
	}
	params := map[string]string{}
	if b := rackBoundary(ct); b != "" {
		params["boundary"] = b
	}
	return strings.ToLower(strings.TrimSpace(base)), params
}

// rackBoundary finds boundary= in a Content-Type header as Rack's
// regular expression did.
func rackBoundary(ct string) string {
	i := strings.Index(strings.ToLower(ct), "boundary=")
	if i < 0 {
		return ""
	}
	s := strings.TrimPrefix(ct[i+len("boundary="):], `"`)
	if j := strings.IndexAny(s, `";,`); j >= 0 {
		s = s[:j]
	}
	return s
}

// parseMultipart reads a multipart/form-data body into q: a part with a
// filename parameter is an Upload spooled to a temp file (a part whose
// filename is empty, a browser's "no file chosen", is skipped); any other
// part is a text parameter set with Params.Set, at most MaxTextPart bytes
// each and opt.MaxForm bytes together. Part names are used as sent (no
// percent-decoding, as Rack). A missing boundary, more than MaxParts parts
// or a malformed body is EINVALID. A body of whitespace only is no form at
// all.
func parseMultipart(q *Request, body *countingReader, boundary string, opt ParseOptions, budget *int) error {
	if boundary == "" {
		return mapcommons.Errorf(mapcommons.EINVALID, "multipart body without a boundary in its Content-Type")
	}
	fail := func(err error) error {
		var e *mapcommons.Error
		var mb *http.MaxBytesError
		switch {
		case body.exceeded:
			return bodyTooLarge(body.max)
		case errors.As(err, &mb):
			return bodyTooLarge(mb.Limit)
		case errors.As(err, &e):
			return e
		case mapcommons.ErrorCode(err) == mapcommons.EFULL:
			return err // spooling a part met a full disk
		}
		return mapcommons.Errorf(mapcommons.EINVALID, "malformed multipart body: %v", err)
	}
	br := bufio.NewReaderSize(body, 64<<10)
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return fail(err)
		}
		if !isBlankByte(c) {
			br.UnreadByte()
			break
		}
	}
	mr := multipart.NewReader(br, boundary)
	var text int64
	for n := 0; ; n++ {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return fail(err)
		}
		if n >= MaxParts {
			return mapcommons.Errorf(mapcommons.EINVALID, "more than %d parts in the multipart body", MaxParts)
		}
		name, filename, isFile := partNames(part.Header.Get("Content-Disposition"))
		if isFile {
			if filename == "" {
				continue // skipped by NextRawPart
			}
			ct, _ := ParseContentType(part.Header.Get("Content-Type"))
			if ct == "" {
				ct = "application/octet-stream"
			}
			u, _, err := spoolTemp(part, opt.TempDir, "upload-*", fileBaseName(filename), fail)
			if u != nil {
				u.Field, u.ContentType = name, ct
				q.Uploads = append(q.Uploads, *u)
			}
			if err != nil {
				return err
			}
			continue
		}
		// Read no more than what is left of MaxForm (and one byte to tell).
		limit := min(int64(MaxTextPart), opt.MaxForm-text)
		b, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return fail(err)
		}
		if int64(len(b)) > limit && limit == MaxTextPart {
			return mapcommons.Errorf(mapcommons.EINVALID, "%s: text part larger than %d bytes (send a file with a filename)", ClipKey(name), MaxTextPart)
		}
		if text += int64(len(b)); text > opt.MaxForm {
			return FormTooLarge(opt.MaxForm)
		}
		if *budget <= 0 {
			return mapcommons.Errorf(mapcommons.EINVALID, "too many parameters (more than %d)", MaxParams)
		}
		*budget--
		if err := q.Params.Set(name, string(b)); err != nil {
			return err
		}
	}
}

// partNames reads the name and filename of a part's Content-Disposition.
// isFile reports whether a filename (or filename*) parameter is present.
// The parameters are read by hand, leniently: .NET's `name="a" ;
// filename="b"; ` and Internet Explorer's unescaped Windows paths
// (`filename="C:\dir\x.shp"`) both work. As in Rack, backslash escapes are
// undone only when the value has no other backslashes, and a filename is
// percent-decoded when every '%' in it starts a valid escape.
func partNames(cd string) (name, filename string, isFile bool) {
	params := dispositionParams(cd)
	name = unbackslash(params["name"])
	if f, ok := params["filename"]; ok {
		filename, isFile = f, true
		if strings.Contains(filename, "%") && validEscapes(filename) {
			filename = strings.ReplaceAll(filename, "+", "%2B")
			filename = formUnescape(filename)
		}
		filename = unbackslash(filename)
	} else if f, ok := params["filename*"]; ok {
		isFile = true
		// RFC 5987: charset'language'percent-encoded
		if parts := strings.SplitN(f, "'", 3); len(parts) == 3 {
			f = formUnescape(strings.ReplaceAll(parts[2], "+", "%2B"))
		}
		filename = f
	}
	return name, filename, isFile
}

// fileBaseName strips any directory part, with either slash.
func fileBaseName(filename string) string {
	if i := strings.LastIndexAny(filename, `/\`); i >= 0 {
		return filename[i+1:]
	}
	return filename
}

// dispositionParams splits `form-data; k="v"; k2=v2` into lower-case keys
// and raw values (the text between the quotes; a backslash keeps the
// next byte from closing them). The first occurrence of a key wins.
func dispositionParams(s string) map[string]string {
	params := map[string]string{}
	i := strings.IndexByte(s, ';')
	if i < 0 {
		return params
	}
	s = s[i+1:]
	for {
		s = strings.TrimLeft(s, " \t;")
		if s == "" {
			return params
		}
		j := strings.IndexAny(s, "=;")
		if j < 0 {
			j = len(s)
		}
		key := strings.ToLower(strings.TrimSpace(s[:j]))
		s = s[j:]
		val := ""
		if strings.HasPrefix(s, "=") {
			s = strings.TrimLeft(s[1:], " \t")
			if strings.HasPrefix(s, `"`) {
				k := 1
				for k < len(s) && s[k] != '"' {
					if s[k] == '\\' && k+1 < len(s) {
						k++
					}
					k++
				}
				val = s[1:min(k, len(s))]
				s = s[min(k+1, len(s)):]
				if m := strings.IndexByte(s, ';'); m >= 0 {
					s = s[m:]
				} else {
					s = ""
				}
			} else {
				m := strings.IndexByte(s, ';')
				if m < 0 {
					m = len(s)
				}
				val, s = strings.TrimSpace(s[:m]), s[m:]
			}
		}
		if _, dup := params[key]; key != "" && !dup {
			params[key] = val
		}
	}
}

// unbackslash undoes quoted-string escapes (\" and \\) unless the value
// holds a backslash before another byte (a Windows path sent unescaped).
func unbackslash(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if i+1 < len(s) && s[i+1] != '\\' && s[i+1] != '"' {
				return s
			}
			i++
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// validEscapes reports whether every '%' in s starts a %XX escape.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}
