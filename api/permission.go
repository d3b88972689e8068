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
// GroupName is the group's name, given only to a caller who may change the
// list and may see that group by name (Policy.CanSeeGroupName); clients
// that echo the list back send it too, and it is ignored (the id decides).
type permissionDoc struct {
	GroupID     any             `json:"group_id"` // a number, or "everyone"
	GroupName   string          `json:"group_name,omitempty"`
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

// manyGroupNames is how many names of a sharing list are looked up one by
// one; beyond, every group is read at once.
const manyGroupNames = 16

// sharingJSON writes a sharing list as permissionsJSON does and, when the
// caller may change it (mayShare), names the groups of its entries that
// the caller may see by name. A group gone since the list was read is left
// unnamed.
func (s *Server) sharingJSON(r *http.Request, perms []mapcommons.Permission, mayShare bool) ([]permissionDoc, error) {
	out := permissionsJSON(perms)
	me := caller(r)
	if !mayShare || me == nil || s.svc.Groups == nil {
		return out, nil
	}
	var ids []int64
	for _, p := range perms {
		if id, ok := p.GroupID(); ok && s.policy.CanSeeGroupName(me, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	names := make(map[int64]string, len(ids))
	if len(ids) > manyGroupNames {
		all, err := s.svc.Groups.FindGroups(r.Context())
		if err != nil {
			return nil, err
		}
		for _, g := range all {
			names[g.ID] = g.Name
		}
	} else {
		for _, id := range ids {
			g, err := s.svc.Groups.FindGroupByID(r.Context(), id)
			if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
				continue
			} else if err != nil {
				return nil, err
			}
			names[id] = g.Name
		}
	}
	for i, p := range perms {
		if id, ok := p.GroupID(); ok && s.policy.CanSeeGroupName(me, id) {
			out[i].GroupName = names[id]
		}
	}
	return out, nil
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
