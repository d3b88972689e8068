package mapcommons

// Sharing lists (spec "Permission entry"): the entries a dataset or map
// carries, each naming everyone or a group and the rights it gets.

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Permission is one entry of an object's sharing list: a group (its id in
// decimal, or "everyone") and the rights it gets. Edit implies download
// implies view (Normalize).
type Permission struct {
	Group    string `json:"group_id"`
	View     bool   `json:"view"`
	Download bool   `json:"download"`
	Edit     bool   `json:"edit"`
}

// GroupEveryone names every caller, logged in or not, in a Permission.
const GroupEveryone = "everyone"

// MaxPermissions bounds the entries of one sharing list.
const MaxPermissions = 1000

// Normalize applies the implications: edit gives download, download gives
// view.
func (e Permission) Normalize() Permission {
	e.Download = e.Download || e.Edit
	e.View = e.View || e.Download
	return e
}

// GroupID returns the id of the group e names; false for everyone.
func (e Permission) GroupID() (int64, bool) {
	if e.Group == GroupEveryone {
		return 0, false
	}
	id, err := strconv.ParseInt(e.Group, 10, 64)
	return id, err == nil && id > 0
}

// SamePermissions reports whether two sharing lists are equal entry by entry.
func SamePermissions(a, b []Permission) bool { return slices.Equal(a, b) }

// ParseShare reads a sharing list written as entries separated by ';' or
// spaces, each "<everyone or group id>:<rights>" with rights a
// comma-separated list of view, download, edit
// ("everyone:view,download;12:edit"). Implications apply; a group named
// twice is an error. An empty text is an empty list.
func ParseShare(text string) ([]Permission, error) {
	out := []Permission{}
	seen := map[string]bool{}
	for _, item := range strings.FieldsFunc(text, func(r rune) bool { return r == ';' || unicode.IsSpace(r) }) {
		group, rights, ok := strings.Cut(item, ":")
		if !ok || rights == "" {
			return nil, Errorf(EINVALID, "%q: want <everyone or group id>:<view,download,edit>", item)
		}
		e := Permission{Group: strings.ToLower(group)}
		if _, isGroup := e.GroupID(); !isGroup && e.Group != GroupEveryone {
			return nil, Errorf(EINVALID, "%q: %q is neither everyone nor a group id", item, group)
		}
		for _, r := range strings.Split(rights, ",") {
			switch strings.ToLower(strings.TrimSpace(r)) {
			case "view":
				e.View = true
			case "download":
				e.Download = true
			case "edit":
				e.Edit = true
			default:
				return nil, Errorf(EINVALID, "%q: %q is not view, download or edit", item, r)
			}
		}
		if seen[e.Group] {
			return nil, Errorf(EINVALID, "%q: %s is named twice", item, e.Group)
		}
		seen[e.Group] = true
		out = append(out, e.Normalize())
	}
	return out, nil
}
