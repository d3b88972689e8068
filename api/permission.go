package api

// Sharing lists in requests and answers (spec "Permission entry",
// "Permissions"; wire contract 7): read from any encoding, checked against
// the groups that exist, and written as datasets and maps show them.

import (
	"net/http"
	"strconv"

	"mapcommons"
)

// permissionDoc is one entry of an object's "permissions" in its JSON.
type permissionDoc struct {
	GroupID     any             `json:"group_id"` // a number, or "everyone"
	Permissions map[string]bool `json:"permissions"`
}

// permissionsJSON writes a sharing list: group ids as numbers, every flag.
func permissionsJSON(perms []mapcommons.Permission) []permissionDoc {
	out := make([]permissionDoc, 0, len(perms))
	for _, p := range perms {
		var g any = p.Group
		if id, ok := p.GroupID(); ok {
			g = id
		}
		out = append(out, permissionDoc{GroupID: g, Permissions: map[string]bool{"view": p.View, "download": p.Download, "edit": p.Edit}})
	}
	return out
}

// checkGroups refuses a sharing list that names a group that does not
// exist (EINVALID, naming the entry).
func (s *Server) checkGroups(r *http.Request, perms []mapcommons.Permission) error {
	for i, p := range perms {
		id, ok := p.GroupID()
		if !ok {
			continue
		}
		if s.svc.Groups == nil {
			return mapcommons.Errorf(mapcommons.EINVALID, "permissions[%d].group_id: there are no groups on this store", i)
		}
		if _, err := s.svc.Groups.FindGroupByID(r.Context(), id); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			return mapcommons.Errorf(mapcommons.EINVALID, "permissions[%d].group_id: group %s does not exist", i, strconv.FormatInt(id, 10))
		} else if err != nil {
			return err
		}
	}
	return nil
}
