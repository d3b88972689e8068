package api

import (
	"encoding/json"
	"io"
	"os"

	"mapcommons/format/geojson"
	"mapcommons/params"
)

// topLevelType returns the "type" member of the JSON object r starts with
// ("" when it is not an object or has none). It streams: the values of
// other members (a FeatureCollection's features before its type) are
// skipped token by token, never held whole.
func topLevelType(r io.Reader) (string, error) {
	dec := json.NewDecoder(r)
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return "", nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", err
		}
		if k == "type" {
			v, err := dec.Token()
			if err != nil {
				return "", err
			}
			s, _ := v.(string)
			return s, nil
		}
		// Skip the value.
		depth := 0
		for {
			t, err := dec.Token()
			if err != nil {
				return "", err
			}
			if d, ok := t.(json.Delim); ok {
				if d == '{' || d == '[' {
					depth++
				} else {
					depth--
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return "", nil
}

// jsonBodyParams settles a JSON body a dataset create spooled (SpoolJSON):
// GeoJSON (a FeatureCollection, a Feature or a geometry, as web code posts
// it with Content-Type application/json) is the upload; anything else is
// parameters, read as any JSON body is, within max-form.
func (s *Server) jsonBodyParams(q *params.Request) error {
	if q.Body == nil || !params.IsJSONMediaType(q.Body.ContentType) {
		return nil
	}
	f, err := os.Open(q.Body.Path)
	if err != nil {
		return err
	}
	t, err := topLevelType(f)
	f.Close()
	if err == nil && geojson.IsObjectType(t) {
		q.Body.ContentType = "application/geo+json"
		return nil
	}
	if q.Body.Size > s.cfg.MaxForm {
		return params.FormTooLarge(s.cfg.MaxForm)
	}
	b, err := os.ReadFile(q.Body.Path)
	if err != nil {
		return err
	}
	os.Remove(q.Body.Path)
	q.Body = nil
	return q.Params.MergeJSONBody(b)
}
