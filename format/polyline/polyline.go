// Package polyline writes Google's encoded polyline format: coordinates
// rounded to 1e-5 degrees, as latitude,longitude pairs, each the delta from
// the previous one, zig-zag encoded in 5-bit chunks offset by 63.
package polyline

import "math"

func appendValue(dst []byte, v int64) []byte {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	for u >= 0x20 {
		dst = append(dst, byte(0x20|(u&0x1f))+63)
		u >>= 5
	}
	return append(dst, byte(u)+63)
}

// Append appends the encoding of the flat lon,lat pairs in xy.
func Append(dst []byte, xy []float64) []byte {
	var plat, plon int64
	for i := 0; i+1 < len(xy); i += 2 {
		lat, lon := int64(math.Round(xy[i+1]*1e5)), int64(math.Round(xy[i]*1e5))
		dst = appendValue(dst, lat-plat)
		dst = appendValue(dst, lon-plon)
		plat, plon = lat, lon
	}
	return dst
}

// Decode reads an encoding back into flat lon,lat pairs; ok is false for a
// malformed string.
func Decode(s string) (xy []float64, ok bool) {
	var vals []int64
	for i := 0; i < len(s); {
		var u uint64
		shift := uint(0)
		for {
			if i >= len(s) || s[i] < 63 || shift > 60 {
				return nil, false
			}
			c := uint64(s[i] - 63)
			i++
			u |= (c & 0x1f) << shift
			shift += 5
			if c < 0x20 {
				break
			}
		}
		v := int64(u >> 1)
		if u&1 != 0 {
			v = ^v
		}
		vals = append(vals, v)
	}
	if len(vals)%2 != 0 {
		return nil, false
	}
	var lat, lon int64
	for i := 0; i < len(vals); i += 2 {
		lat += vals[i]
		lon += vals[i+1]
		xy = append(xy, float64(lon)/1e5, float64(lat)/1e5)
	}
	return xy, true
}
