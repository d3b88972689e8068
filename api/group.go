package api

// Groups (spec "Groups", wire contract 7): create and delete groups, list,
// add and remove their members. Administrators only, on both kinds of
// instance.

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/params"
)

// groupRef is the JSON of a new group: what the Python client parses.
type groupRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// groupListEntry is a group in GET /groups: administrators also see how
// many members it has.
type groupListEntry struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	Members   *int64 `json:"member_count,omitempty"`
}

// groupDoc is the JSON of a group with its members (spec "Group").
type groupDoc struct {
	ID    int64                `json:"id"`
	Name  string               `json:"name"`
	Users []map[string]userDoc `json:"users"`
}

// membersJSON lists users as the user resource shows them; e-mail and name
// only to those who may see them (administrators).
func (s *Server) membersJSON(r *http.Request, users []*mapcommons.User) []map[string]userDoc {
	out := make([]map[string]userDoc, 0, len(users))
	for _, u := range users {
		out = append(out, userJSON(u, s.policy.CanSeeUserDetails(caller(r), u)))
	}
	return out
}

func (s *Server) groupLink(r *http.Request, id int64) string {
	return s.baseURL(r) + "/groups/" + strconv.FormatInt(id, 10) + ".json"
}

// groupsAllowed checks that groups may be managed here by the caller.
func (s *Server) groupsAllowed(r *http.Request) error {
	if err := s.policy.CanManageGroups(caller(r)); err != nil {
		return err
	}
	if s.svc.Groups == nil {
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "groups are not available on this store")
	}
	if f := info(r).format; f != "json" && f != "xml" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "groups have no %s form", f)
	}
	return nil
}

// findGroup authorizes the caller and loads the {id} group.
func (s *Server) findGroup(r *http.Request) (*mapcommons.UserGroup, error) {
	if err := s.groupsAllowed(r); err != nil {
		return nil, err
	}
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "group %q not found", raw)
	}
	return s.svc.Groups.FindGroupByID(r.Context(), id)
}

// groupDocument is the group with its members.
func (s *Server) groupDocument(r *http.Request, g *mapcommons.UserGroup) (*groupDoc, error) {
	members, err := s.svc.Groups.FindGroupMembers(r.Context(), g.ID)
	if err != nil {
		return nil, err
	}
	return &groupDoc{ID: g.ID, Name: g.Name, Users: s.membersJSON(r, members)}, nil
}

// findMember resolves a user named in a group request: a login, or an id.
func (s *Server) findMember(r *http.Request, key string) (*mapcommons.User, error) {
	if id, err := strconv.ParseInt(key, 10, 64); err == nil {
		return s.svc.Users.FindUserByID(r.Context(), id)
	}
	return s.svc.Users.FindUserByLogin(r.Context(), key)
}

// handleGroupCreate answers POST /groups: a new group owned by the caller.
func (s *Server) handleGroupCreate(w http.ResponseWriter, r *http.Request) error {
	q, err := s.parseAllowed(r, s.groupsAllowed(r))
	if err != nil {
		return err
	}
	defer q.Cleanup()
	// group[name] (DOC), name (PY), JSON {"group": {"name": …}} or {"name": …}.
	name, ok := q.Params.String("group", "name")
	if !ok {
		if name, ok = q.Params.String("Group", "name"); !ok {
			name, _ = q.Params.String("name")
		}
	}
	if name, err = mapcommons.NormalizeGroupName(name); err != nil {
		return err
	}
	g := &mapcommons.UserGroup{Name: name}
	if err := s.svc.Groups.CreateGroup(r.Context(), g); err != nil {
		return err
	}
	return s.created(w, r, s.groupLink(r, g.ID), &groupRef{ID: g.ID, Name: g.Name})
}

// handleGroupList lists groups: GET /groups. Administrators get every
// group with its number of members; another signed-in user the groups
// they belong to (those they may share with by name:
// Policy.CanSeeGroupName), without counts; an
// anonymous caller is asked to sign in. (Not in the original service: the
// browser application's groups page and sharing panel need it.)
func (s *Server) handleGroupList(w http.ResponseWriter, r *http.Request) error {
	me := caller(r)
	if me == nil {
		return mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "authentication required")
	}
	if s.svc.Groups == nil {
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "groups are not available on this store")
	}
	if f := info(r).format; f != "json" && f != "xml" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "groups have no %s form", f)
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	all, err := s.svc.Groups.FindGroups(r.Context())
	if err != nil {
		return err
	}
	admin := s.policy.CanManageGroups(me) == nil
	out := []groupListEntry{}
	for _, g := range all {
		if !s.policy.CanSeeGroupName(me, g.ID) {
			continue
		}
		e := groupListEntry{ID: g.ID, Name: g.Name, CreatedAt: isoTime(g.CreatedAt)}
		if admin {
			e.Members = &g.Members
		}
		out = append(out, e)
	}
	w.Header().Set("Cache-Control", "private, no-cache")
	return s.writeJSON(w, r, http.StatusOK, out)
}

// handleGroupGet answers GET /groups/{id}: the group, to those who may see it.
func (s *Server) handleGroupGet(w http.ResponseWriter, r *http.Request) error {
	return s.answerGroup(w, r, false)
}

// answerGroup answers the {id} group's document, or its members alone.
func (s *Server) answerGroup(w http.ResponseWriter, r *http.Request, members bool) error {
	g, err := findNoBody(s, r, s.findGroup)
	if err != nil {
		return err
	}
	d, err := s.groupDocument(r, g)
	if err != nil {
		return err
	}
	if members {
		return s.writeJSON(w, r, http.StatusOK, d.Users)
	}
	return s.writeJSON(w, r, http.StatusOK, d)
}

// handleGroupDelete answers DELETE /groups/{id}: its owner or an
// administrator deletes the group.
func (s *Server) handleGroupDelete(w http.ResponseWriter, r *http.Request) error {
	g, err := findNoBody(s, r, s.findGroup)
	if err != nil {
		return err
	}
	if err := s.svc.Groups.DeleteGroup(r.Context(), g.ID); err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}

// handleGroupUsers answers GET /groups/{id}/users: the group's members.
func (s *Server) handleGroupUsers(w http.ResponseWriter, r *http.Request) error {
	return s.answerGroup(w, r, true)
}

// memberLogin reads the login of the user to add: login=, username=,
// user[login]=, user= (or the same in JSON), or the bare login as the body
// (the DOC's curl -d "kate": a form key without a value, or a plain text
// body).
func memberLogin(q *params.Request) (string, error) {
	p := q.Params
	for _, path := range [][]string{{"login"}, {"username"}, {"user", "login"}, {"User", "login"}, {"user", "username"}, {"user"}, {"user_id"}} {
		if v, ok := p.String(path...); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	var bare []string
	for k, v := range p {
		if s, ok := v.(string); ok && s == "" {
			bare = append(bare, k)
		}
	}
	if len(bare) == 1 {
		return strings.Trim(strings.TrimSpace(bare[0]), `"'`), nil
	}
	if q.Body != nil {
		f, err := os.Open(q.Body.Path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 256))
		if err != nil {
			return "", err
		}
		if v := strings.Trim(strings.TrimSpace(string(b)), `"'`); v != "" && !strings.ContainsAny(v, "\r\n") {
			return v, nil
		}
	}
	return "", mapcommons.Errorf(mapcommons.EINVALID, "login: missing: send the login of the user to add (login=<login>, or the login alone as the body)")
}

// handleGroupUserAdd answers POST /groups/{id}/users: a user added to the group.
func (s *Server) handleGroupUserAdd(w http.ResponseWriter, r *http.Request) error {
	g, q, err := parseFor(s, r, s.findGroup)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	login, err := memberLogin(q)
	if err != nil {
		return err
	}
	u, err := s.findMember(r, login)
	if err != nil {
		return err
	}
	if err := s.svc.Groups.AddGroupMember(r.Context(), g.ID, u.ID); err != nil {
		return err
	}
	d, err := s.groupDocument(r, g)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, http.StatusOK, d)
}

// handleGroupUserRemove answers DELETE /groups/{id}/users/{login}: a member
// removed from the group.
func (s *Server) handleGroupUserRemove(w http.ResponseWriter, r *http.Request) error {
	g, err := findNoBody(s, r, s.findGroup)
	if err != nil {
		return err
	}
	u, err := s.findMember(r, r.PathValue("login"))
	if err != nil {
		return err
	}
	if err := s.svc.Groups.RemoveGroupMember(r.Context(), g.ID, u.ID); err != nil {
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %s is not a member of group %d", u.Login, g.ID)
		}
		return err
	}
	return empty(w, http.StatusNoContent)
}
