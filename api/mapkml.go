package api

import (
	"bufio"
	"fmt"
	"html"
	"math"
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/kml"
	"mapcommons/style"
)

// The styled KML of a map (GET /maps/{id}.kml): one Folder per visible
// layer with a Placemark per feature of its dataset, KML styles derived
// from the layer's styles (one per class for a classed layer, with a
// legend in the Folder's description), and a NetworkLink for url: layers.

// kmlColor is an 0xRRGGBB colour with an opacity in 0..1.
func kmlColor(rgb int, opacity float64) *kml.Color {
	if math.IsNaN(opacity) {
		opacity = 1
	}
	a := math.Round(math.Max(0, math.Min(1, opacity)) * 255)
	return &kml.Color{R: uint8(rgb >> 16), G: uint8(rgb >> 8), B: uint8(rgb), A: uint8(a)}
}

func colorOr(c *int, def int) int {
	if c != nil {
		return *c
	}
	return def
}

// layerStyle is the KML style of a layer, or of one class of it when fill
// is the class's colour.
func layerStyle(id string, l *mapcommons.Layer, fill int, classed bool) kml.Style {
	st := &l.Styles
	op := l.Opacity
	weight := 1.0
	if st.Stroke.Weight != nil {
		weight = *st.Stroke.Weight
	}
	iconColor := colorOr(st.Icon.Color, style.DefaultIcon)
	iconOpacity := 1.0
	if st.Icon.Opacity != nil {
		iconOpacity = *st.Icon.Opacity
	}
	if classed {
		iconColor = fill
	}
	// Icon size scales the area ("0.1 is 10 percent, 2 is twice"), KML's
	// scale the width: the square root.
	size := st.Icon.Size
	if size <= 0 {
		size = mapcommons.DefaultIconSize
	}
	size = math.Sqrt(size)
	out := kml.Style{
		ID:        id,
		LineColor: kmlColor(colorOr(st.Stroke.Color, style.DefaultStroke), st.Stroke.Alpha*op),
		LineWidth: weight,
		PolyColor: kmlColor(fill, st.Fill.Opacity*op),
		IconColor: kmlColor(iconColor, iconOpacity*op),
		IconScale: size,
	}
	if strings.HasPrefix(st.Icon.Symbol, "http://") || strings.HasPrefix(st.Icon.Symbol, "https://") {
		out.IconHref = st.Icon.Symbol
	}
	if st.Click != "" {
		out.Balloon = "$[description]"
	}
	return out
}

// legend describes the classes of a classed layer as HTML.
func legend(cd *style.Classes) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<p>%s of %s</p><table>", html.EscapeString(cd.Method), html.EscapeString(cd.Attribute))
	for k := range cd.Counts {
		c := 0
		if k < len(cd.Colors) {
			c = cd.Colors[k]
		}
		fmt.Fprintf(&b, `<tr><td style="background:#%06X">&#160;&#160;&#160;</td><td>%s – %s</td><td>%d</td></tr>`,
			c&0xFFFFFF, strconv.FormatFloat(cd.Breaks[k], 'g', -1, 64), strconv.FormatFloat(cd.Breaks[k+1], 'g', -1, 64), cd.Counts[k])
	}
	b.WriteString("</table>")
	if cd.Nulls > 0 || cd.Outside > 0 {
		fmt.Fprintf(&b, "<p>%d without a value, %d outside the classes</p>", cd.Nulls, cd.Outside)
	}
	return b.String()
}

// writeMapKML answers a map as styled KML.
func (s *Server) writeMapKML(w http.ResponseWriter, r *http.Request, m *mapcommons.Map) error {
	type plan struct {
		l     *mapcommons.Layer
		ds    *mapcommons.Dataset
		cd    *style.Classes
		col   int
		style string
		note  string
	}
	var plans []plan
	var styles []kml.Style
	me := caller(r)
	for i := range m.Layers {
		l := &m.Layers[i]
		if !l.Visible {
			continue
		}
		p := plan{l: l, col: -1, style: "layer" + strconv.Itoa(i)}
		if ds := s.layerDataset(r.Context(), l.Source); ds != nil {
			if err := s.policy.CanDownloadDataset(me, ds); err != nil {
				p.note = "The data of this layer is not shared with you."
			} else {
				p.ds = ds
			}
		}
		if p.ds != nil {
			cd, err := s.classes.Classify(r.Context(), l, p.ds)
			if err != nil {
				return err
			}
			if cd != nil && len(cd.Counts) > 0 {
				p.cd = cd
				p.col = mapcommons.AttrIndex(p.ds.Attributes, style.Classing(l).SelectedAttribute)
				for k := range cd.Counts {
					styles = append(styles, layerStyle(p.style+"-class"+strconv.Itoa(k), l, cd.Colors[k], true))
				}
			}
		}
		styles = append(styles, layerStyle(p.style, l, colorOr(l.Styles.Fill.Color, style.DefaultFill), false))
		plans = append(plans, p)
	}
	ct, _ := format.ContentType("kml")
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", `attachment; filename="map-`+strconv.FormatInt(m.ID, 10)+`.kml"`)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := kml.NewEncoder(bw)
	desc := ""
	if m.Description != nil {
		desc = *m.Description
	}
	if err := enc.StartDocument(m.Title, desc); err != nil {
		return err
	}
	for _, st := range styles {
		if err := enc.Style(st); err != nil {
			return err
		}
	}
	for _, p := range plans {
		l := p.l
		if rest, ok := strings.CutPrefix(l.Source, "url:"); ok {
			if err := enc.NetworkLink(l.Title, rest); err != nil {
				return err
			}
			continue
		}
		desc := l.Subtitle
		if p.cd != nil {
			desc = strings.TrimSpace(desc + "\n" + legend(p.cd))
		}
		if p.note != "" {
			desc = strings.TrimSpace(desc + "\n" + p.note)
		}
		if err := enc.StartFolder(l.Title, desc); err != nil {
			return err
		}
		if p.ds != nil {
			if err := s.layerPlacemarks(r, enc, p.ds, l, p.cd, p.col, p.style); err != nil {
				return err
			}
		}
		if err := enc.EndFolder(); err != nil {
			return err
		}
	}
	if err := enc.EndDocument(); err != nil {
		return err
	}
	return bw.Flush()
}

// layerPlacemarks writes a Placemark for each feature of a layer's dataset.
func (s *Server) layerPlacemarks(r *http.Request, enc *kml.Encoder, ds *mapcommons.Dataset, l *mapcommons.Layer, cd *style.Classes, col int, styleID string) error {
	names := make([]string, len(ds.Attributes))
	for i, a := range ds.Attributes {
		names[i] = a.Name
	}
	naming := kml.NewNaming(ds.Attributes)
	return s.svc.Features.ScanFeatures(r.Context(), ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		p := kml.Placemark{Names: names, Values: f.Values, Geometry: f.Geometry, StyleURL: "#" + styleID}
		p.Name = naming.Name(f)
		if l.Styles.Click != "" {
			p.Description = renderTemplate(l.Styles.Click, ds.Attributes, f.Values)
		} else if l.Styles.Hover != "" {
			p.Description = renderTemplate(l.Styles.Hover, ds.Attributes, f.Values)
		}
		if cd != nil && col >= 0 {
			if k := cd.Result.Class(style.NumberOf(f.Values[col])); k >= 0 {
				p.StyleURL = "#" + styleID + "-class" + strconv.Itoa(k)
			}
		}
		return enc.Placemark(p)
	})
}
