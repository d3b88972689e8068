// wmscaps.go: the WMS capabilities document (encoding/xml).
package api

import (
	"encoding/xml"
	"net/http"
	"net/url"

	"mapcommons"
	"mapcommons/render"
)

type wmsCapabilitiesDoc struct {
	XMLName        xml.Name      `xml:"WMS_Capabilities"`
	Version        string        `xml:"version,attr"`
	XMLNS          string        `xml:"xmlns,attr"`
	XLink          string        `xml:"xmlns:xlink,attr"`
	SLD            string        `xml:"xmlns:sld,attr"`
	XSI            string        `xml:"xmlns:xsi,attr"`
	SchemaLocation string        `xml:"xsi:schemaLocation,attr"`
	Service        wmsService    `xml:"Service"`
	Capability     wmsCapability `xml:"Capability"`
}

type wmsService struct {
	Name           string       `xml:"Name"`
	Title          string       `xml:"Title"`
	Abstract       string       `xml:"Abstract"`
	OnlineResource wmsOnlineRes `xml:"OnlineResource"`
	Fees           string       `xml:"Fees"`
	Access         string       `xml:"AccessConstraints"`
	LayerLimit     int          `xml:"LayerLimit"`
	MaxWidth       int          `xml:"MaxWidth"`
	MaxHeight      int          `xml:"MaxHeight"`
}

type wmsOnlineRes struct {
	Type string `xml:"xlink:type,attr"`
	Href string `xml:"xlink:href,attr"`
}

type wmsCapability struct {
	Request   wmsRequests  `xml:"Request"`
	Exception wmsFormats   `xml:"Exception"`
	Layer     wmsLayerCaps `xml:"Layer"`
}

type wmsFormats struct {
	Format []string `xml:"Format"`
}

type wmsRequests struct {
	GetCapabilities  wmsOperation `xml:"GetCapabilities"`
	GetMap           wmsOperation `xml:"GetMap"`
	GetFeatureInfo   wmsOperation `xml:"GetFeatureInfo"`
	GetLegendGraphic wmsOperation `xml:"sld:GetLegendGraphic"`
}

type wmsOperation struct {
	Format  []string `xml:"Format"`
	DCPType struct {
		HTTP struct {
			Get struct {
				OnlineResource wmsOnlineRes `xml:"OnlineResource"`
			} `xml:"Get"`
		} `xml:"HTTP"`
	} `xml:"DCPType"`
}

type wmsGeoBBox struct {
	West  float64 `xml:"westBoundLongitude"`
	East  float64 `xml:"eastBoundLongitude"`
	South float64 `xml:"southBoundLatitude"`
	North float64 `xml:"northBoundLatitude"`
}

type wmsBBox struct {
	CRS  string  `xml:"CRS,attr"`
	MinX float64 `xml:"minx,attr"`
	MinY float64 `xml:"miny,attr"`
	MaxX float64 `xml:"maxx,attr"`
	MaxY float64 `xml:"maxy,attr"`
}

type wmsStyle struct {
	Name      string       `xml:"Name"`
	Title     string       `xml:"Title"`
	LegendURL wmsLegendURL `xml:"LegendURL"`
}

type wmsLegendURL struct {
	Width          int          `xml:"width,attr,omitempty"`
	Height         int          `xml:"height,attr,omitempty"`
	Format         string       `xml:"Format"`
	OnlineResource wmsOnlineRes `xml:"OnlineResource"`
}

type wmsLayerCaps struct {
	Queryable *int           `xml:"queryable,attr,omitempty"`
	Name      string         `xml:"Name,omitempty"`
	Title     string         `xml:"Title"`
	Abstract  string         `xml:"Abstract,omitempty"`
	CRS       []string       `xml:"CRS"`
	GeoBBox   *wmsGeoBBox    `xml:"EX_GeographicBoundingBox"`
	BBox      []wmsBBox      `xml:"BoundingBox"`
	Style     []wmsStyle     `xml:"Style"`
	Layers    []wmsLayerCaps `xml:"Layer"`
}

// wmsCRSs are the CRSs of every layer.
var wmsCRSs = []string{"CRS:84", "EPSG:4326", "EPSG:3857"}

// wmsBoxes are the layer's box (west, south, east, north in lon/lat) as
// EX_GeographicBoundingBox and as a BoundingBox in each CRS (EPSG:4326's
// axes latitude first).
func wmsBoxes(e [4]float64) (*wmsGeoBBox, []wmsBBox) {
	e = [4]float64{max(e[0], -180), max(e[1], -90), min(e[2], 180), min(e[3], 90)}
	x0, y0 := fromLonLat(render.CRSMercator, e[0], e[1])
	x1, y1 := fromLonLat(render.CRSMercator, e[2], e[3])
	return &wmsGeoBBox{West: e[0], East: e[2], South: e[1], North: e[3]}, []wmsBBox{
		{CRS: "CRS:84", MinX: e[0], MinY: e[1], MaxX: e[2], MaxY: e[3]},
		{CRS: "EPSG:4326", MinX: e[1], MinY: e[0], MaxX: e[3], MaxY: e[2]},
		{CRS: "EPSG:3857", MinX: x0, MinY: y0, MaxX: x1, MaxY: y1},
	}
}

// wmsCapabilities answers GetCapabilities: the service, its operations,
// and a root layer holding one layer per dataset the caller may download
// and per map they may view, oldest first, at most wmsMaxEntries of each
// (searched as /ogc/collections and search list them).
func (s *Server) wmsCapabilities(w http.ResponseWriter, r *http.Request) error {
	base := s.baseURL(r) + "/wms?"
	online := wmsOnlineRes{Type: "simple", Href: base}
	op := func(formats ...string) wmsOperation {
		o := wmsOperation{Format: formats}
		o.DCPType.HTTP.Get.OnlineResource = online
		return o
	}
	doc := wmsCapabilitiesDoc{Version: wmsVersion, XMLNS: "http://www.opengis.net/wms", XLink: "http://www.w3.org/1999/xlink",
		SLD: "http://www.opengis.net/sld", XSI: "http://www.w3.org/2001/XMLSchema-instance",
		SchemaLocation: "http://www.opengis.net/wms http://schemas.opengis.net/wms/1.3.0/capabilities_1_3_0.xsd " +
			"http://www.opengis.net/sld http://schemas.opengis.net/sld/1.1.0/sld_capabilities.xsd",
		Service: wmsService{Name: "WMS", Title: "mapcommons", Abstract: "The datasets and maps of this server, drawn as their images are.",
			OnlineResource: wmsOnlineRes{Type: "simple", Href: s.baseURL(r) + "/"}, Fees: "none", Access: "none",
			LayerLimit: wmsLayerLimit, MaxWidth: render.MaxSide, MaxHeight: render.MaxSide},
	}
	doc.Capability.Request = wmsRequests{
		GetCapabilities:  op("text/xml"),
		GetMap:           op(pngType, jpegType),
		GetFeatureInfo:   op(wmsInfoFormats...),
		GetLegendGraphic: op(pngType),
	}
	doc.Capability.Exception = wmsFormats{Format: []string{"XML"}}
	root := wmsLayerCaps{Title: "mapcommons", CRS: wmsCRSs}
	root.GeoBBox, root.BBox = wmsBoxes([4]float64{-180, -90, 180, 90})
	layers, err := s.wmsCapabilityLayers(r)
	if err != nil {
		return err
	}
	root.Layers = layers
	doc.Capability.Layer = root
	b, err := xml.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", wmsXMLType)
	_, err = w.Write(append([]byte(xml.Header), b...))
	return err
}

// wmsCapabilityLayers are the layers of the caller's datasets and maps.
func (s *Server) wmsCapabilityLayers(r *http.Request) ([]wmsLayerCaps, error) {
	if s.svc.Search == nil {
		return nil, mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "listing datasets is not available on this store")
	}
	me := caller(r)
	one := 1
	layer := func(name, title, abstract string, extent [4]float64) wmsLayerCaps {
		l := wmsLayerCaps{Queryable: &one, Name: name, Title: title, Abstract: abstract}
		l.GeoBBox, l.BBox = wmsBoxes(extent)
		legend := s.baseURL(r) + "/wms?" + url.Values{"SERVICE": {"WMS"}, "VERSION": {wmsVersion}, "REQUEST": {"GetLegendGraphic"},
			"LAYER": {name}, "STYLE": {wmsDefaultStyle}, "FORMAT": {pngType}}.Encode()
		l.Style = []wmsStyle{{Name: wmsDefaultStyle, Title: "default: " + title,
			LegendURL: wmsLegendURL{Format: pngType, OnlineResource: wmsOnlineRes{Type: "simple", Href: legend}}}}
		return l
	}
	var out []wmsLayerCaps
	seen := map[int64]*mapcommons.Dataset{}
	for _, model := range []string{mapcommons.ModelOverlay, mapcommons.ModelMap} {
		if model == mapcommons.ModelMap && s.svc.Maps == nil {
			break
		}
		listed := 0
		for offset := int64(0); listed < wmsMaxEntries; {
			filter := mapcommons.SearchFilter{Model: model, Sort: mapcommons.SortCreated, Offset: offset,
				Limit: mapcommons.MaxSearchLimit, Visibility: s.policy.SearchVisibility(me)}
			results, total, err := s.svc.Search.Search(r.Context(), filter)
			if err != nil {
				return nil, err
			}
			for _, res := range results {
				if listed >= wmsMaxEntries {
					break
				}
				if model == mapcommons.ModelOverlay {
					ds, err := s.svc.Datasets.FindDatasetByID(r.Context(), res.ID)
					if err != nil || s.policy.CanDownloadDataset(me, ds) != nil {
						continue // gone since the search, or not to be drawn for this caller
					}
					seen[ds.ID] = ds
					desc := ds.Description
					out = append(out, layer(ds.ReadableName(), ds.Title, desc, datasetExtent(ds)))
				} else {
					m, err := s.svc.Maps.FindMapByID(r.Context(), res.ID)
					if err != nil || s.policy.CanViewMap(me, m) != nil {
						continue
					}
					desc := ""
					if m.Description != nil {
						desc = *m.Description
					}
					out = append(out, layer(wmsMapName(m), m.Title, desc, mapExtent(m, s.viewableLayers(r.Context(), caller(r), m, seen))))
				}
				listed++
			}
			offset += int64(len(results))
			if len(results) == 0 || offset >= total {
				break
			}
		}
	}
	return out, nil
}
