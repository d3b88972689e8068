package mapcommons

// This file decides who may do what: every permission rule of the service
// lives here, as pure functions of the caller and the object, so that the
// HTTP layer and the stores never decide on their own.
//
// Roles: anonymous, any logged-in user, a member of a group, the owner, an
// administrator. Rights on a dataset or map: view (see its metadata, find
// it in search), download (read its features and every download format),
// edit (change metadata, features, the feed, layers). Edit implies
// download implies view; the owner and administrators have every right.
// Everyone else gets the union of the entries of the object's sharing list
// that name everyone or one of their groups (a write always needs a
// logged-in caller). On a hosted instance everyone may also view and
// download every dataset.
//
// Refusals: a caller who may not view an object is told it does not exist
// when logged in (ENOTFOUND: private objects do not reveal that they
// exist) and asked to log in when anonymous (EUNAUTHORIZED); a caller who
// may view it but lacks the right asked for gets EFORBIDDEN when logged
// in, EUNAUTHORIZED when anonymous (logging in may give the right). An
// object that does not exist is refused as a private one is (NotFound), so
// that no answer tells which ids exist.

// Mode is the kind of instance (spec "Two kinds of instance").
type Mode string

// Instance kinds.
const (
	ModeHosted    Mode = "hosted"    // a public instance: reads of datasets need no credentials
	ModeAppliance Mode = "appliance" // a private instance: reads follow permissions
)

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool { return m == ModeHosted || m == ModeAppliance }

// Policy holds the instance settings the rules depend on.
type Policy struct {
	Mode   Mode
	Signup bool // whether anyone may create an account (hosted ignores false only for admins)
	// DefaultShare is the sharing list of new datasets and maps on an
	// appliance (nil: private to their owner until shared).
	DefaultShare []Permission
}

func errLogin() error { return Errorf(EUNAUTHORIZED, "authentication required") }

func isAdmin(u *User) bool { return u != nil && u.Admin }

func isOwner(u *User, ownerID int64) bool { return u != nil && ownerID != 0 && u.ID == ownerID }

// Rights are what a caller may do with a dataset or a map.
type Rights struct {
	View     bool `json:"view"`
	Download bool `json:"download"`
	Edit     bool `json:"edit"`
}

// allRights are the owner's and an administrator's.
var allRights = Rights{View: true, Download: true, Edit: true}

// granted is the union of the rights perms give caller: the entries for
// everyone, and for the caller's groups. An anonymous caller never edits.
func granted(caller *User, perms []Permission) Rights {
	var r Rights
	for _, e := range perms {
		applies := e.Group == GroupEveryone
		if !applies && caller != nil {
			id, ok := e.GroupID()
			applies = ok && caller.InGroup(id)
		}
		if applies {
			e = e.Normalize()
			r.View, r.Download, r.Edit = r.View || e.View, r.Download || e.Download, r.Edit || e.Edit
		}
	}
	if caller == nil {
		r.Edit = false
	}
	return r
}

// DatasetRights are caller's rights on ds.
func (p Policy) DatasetRights(caller *User, ds *Dataset) Rights {
	if isAdmin(caller) || isOwner(caller, ds.OwnerID) {
		return allRights
	}
	r := granted(caller, ds.Permissions)
	if p.Mode == ModeHosted {
		r.View, r.Download = true, true
	}
	return r
}

// MapRights are caller's rights on m. Maps follow their sharing list on
// both kinds of instance (new maps are shared with everyone on a hosted
// one: DefaultMapPermissions).
func (p Policy) MapRights(caller *User, m *Map) Rights {
	if isAdmin(caller) || isOwner(caller, m.OwnerID) {
		return allRights
	}
	return granted(caller, m.Permissions)
}

// refusal is the error for a caller with rights r who lacks what an
// action needs: see the file comment.
func refusal(caller *User, r Rights, kind string, id int64, forbidden string) error {
	switch {
	case !r.View && caller == nil:
		return errLogin()
	case !r.View:
		return Errorf(ENOTFOUND, "%s %d not found", kind, id)
	case caller == nil:
		return Errorf(EUNAUTHORIZED, "authentication required: %s", forbidden)
	}
	return Errorf(EFORBIDDEN, "%s", forbidden)
}

// NotFound is the refusal for a caller who asked for a dataset or map
// (model ModelOverlay or ModelMap) that does not exist, given its store's
// error err: the same as for one that exists and that the caller may not
// view, so that no answer tells whether an id exists. An anonymous caller
// is asked to log in wherever an object of that kind may be hidden from
// them (datasets on an appliance, maps on both kinds of instance); a
// logged-in caller is told it does not exist, as for a private one.
func (p Policy) NotFound(caller *User, model string, err error) error {
	if caller == nil && ErrorCode(err) == ENOTFOUND && (model == ModelMap || p.Mode != ModeHosted) {
		return errLogin()
	}
	return err
}

// CanCreateUser: anyone on a hosted instance or with sign-up open; an
// administrator otherwise.
func (p Policy) CanCreateUser(caller *User) error {
	if p.Mode == ModeHosted || p.Signup || isAdmin(caller) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "sign-up is closed: only an administrator may create users")
}

// CanGrantAdmin: only an administrator makes or unmakes administrators.
func (p Policy) CanGrantAdmin(caller *User) error {
	if isAdmin(caller) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "only an administrator may grant administrator rights")
}

// CanSeeUserDetails: the user themself and administrators see e-mail and name.
func (p Policy) CanSeeUserDetails(caller, target *User) bool {
	return isAdmin(caller) || (caller != nil && caller.ID == target.ID)
}

// CanModifyUser: the user themself or an administrator.
func (p Policy) CanModifyUser(caller, target *User) error {
	if p.CanSeeUserDetails(caller, target) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "only %s or an administrator may change this user", target.Login)
}

// CanDeleteUser: the user themself or an administrator.
func (p Policy) CanDeleteUser(caller, target *User) error {
	if p.CanSeeUserDetails(caller, target) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "only %s or an administrator may delete this user", target.Login)
}

// CanSetUpSecondFactor: only the user themself sets up their second
// factor (an administrator may remove it: CanModifyUser).
func (p Policy) CanSetUpSecondFactor(caller, target *User) error {
	if caller != nil && caller.ID == target.ID {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "only %s may set up their second factor", target.Login)
}

// CanIssueSignInLink: administrators only issue one-time sign-in links.
func (p Policy) CanIssueSignInLink(caller, target *User) error {
	if isAdmin(caller) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "only an administrator may issue a sign-in link")
}

// CanManageGroups: create, list, change and delete groups and their
// members. Administrators only, on both kinds of instance (spec
// "Authentication").
func (p Policy) CanManageGroups(caller *User) error {
	if isAdmin(caller) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "only an administrator may manage groups")
}

// CanSeeGroupName: who may know a group by its name (and so that it
// exists): administrators, every group; a signed-in user, the groups they
// belong to. The names go out in GET /groups and, to whoever may change an
// object's sharing list, beside the entries of that list naming those
// groups; a group named to anyone else is answered as a missing one. The
// entries name no other group: an owner who shares by number with a group
// she is not in would otherwise read its name back, and so learn every
// group's name number by number. Members stay the administrators' to see.
func (p Policy) CanSeeGroupName(caller *User, groupID int64) bool {
	return isAdmin(caller) || caller.InGroup(groupID)
}

// CanCreateDataset: any logged-in user.
func (p Policy) CanCreateDataset(caller *User) error {
	if caller == nil {
		return errLogin()
	}
	return nil
}

// DefaultDatasetPermissions is the sharing list of a new dataset: viewable
// and downloadable by everyone on a hosted instance (as every dataset is
// there), the --default-share list on an appliance (private by default).
func (p Policy) DefaultDatasetPermissions() []Permission {
	return p.defaultPermissions()
}

// DefaultMapPermissions is the sharing list of a new map: public on a
// hosted instance, the --default-share list on an appliance (private by
// default).
func (p Policy) DefaultMapPermissions() []Permission {
	return p.defaultPermissions()
}

func (p Policy) defaultPermissions() []Permission {
	if p.Mode == ModeHosted {
		return []Permission{{Group: GroupEveryone, View: true, Download: true}}
	}
	out := make([]Permission, len(p.DefaultShare))
	copy(out, p.DefaultShare)
	return out
}

// CanViewDataset: see the dataset's metadata.
func (p Policy) CanViewDataset(caller *User, ds *Dataset) error {
	if r := p.DatasetRights(caller, ds); !r.View {
		return refusal(caller, r, "dataset", ds.ID, "")
	}
	return nil
}

// CanDownloadDataset: read its features and every download format.
func (p Policy) CanDownloadDataset(caller *User, ds *Dataset) error {
	if r := p.DatasetRights(caller, ds); !r.Download {
		return refusal(caller, r, "dataset", ds.ID, "dataset "+itoa64(ds.ID)+" may be viewed but its data is not shared for download with you")
	}
	return nil
}

// CanSeeDatasetStats: the statistics of a dataset's numeric columns
// (minimum, maximum, mean, median) in its JSON. They tell the values of a
// small dataset, so they need download, not only view.
func (p Policy) CanSeeDatasetStats(caller *User, ds *Dataset) bool {
	return p.DatasetRights(caller, ds).Download
}

// CanEditDataset: change metadata and features, refetch a feed.
func (p Policy) CanEditDataset(caller *User, ds *Dataset) error {
	if r := p.DatasetRights(caller, ds); !r.Edit {
		return refusal(caller, r, "dataset", ds.ID, "dataset "+itoa64(ds.ID)+" may be changed by its owner, an administrator, or a group with edit permission only")
	}
	return nil
}

// CanDeleteDataset: the owner and administrators (edit does not give it).
func (p Policy) CanDeleteDataset(caller *User, ds *Dataset) error {
	if isAdmin(caller) || isOwner(caller, ds.OwnerID) {
		return nil
	}
	return refusal(caller, p.DatasetRights(caller, ds), "dataset", ds.ID, "only the owner or an administrator may delete dataset "+itoa64(ds.ID))
}

// CanSetDatasetPermissions: change the sharing list. The owner and
// administrators; on an appliance also a holder of edit (spec "Permission
// set"; DOC: "on GeoIQ must be data owner or have edit permissions").
func (p Policy) CanSetDatasetPermissions(caller *User, ds *Dataset) error {
	r := p.DatasetRights(caller, ds)
	if isAdmin(caller) || isOwner(caller, ds.OwnerID) || (p.Mode == ModeAppliance && r.Edit) {
		return nil
	}
	return refusal(caller, r, "dataset", ds.ID, "permissions: only the owner or an administrator may share dataset "+itoa64(ds.ID))
}

// CanCreateMap: any logged-in user.
func (p Policy) CanCreateMap(caller *User) error {
	if caller == nil {
		return errLogin()
	}
	return nil
}

// CanViewMap: see a map, its layers and its KML (a layer's features also
// need download on its dataset).
func (p Policy) CanViewMap(caller *User, m *Map) error {
	if r := p.MapRights(caller, m); !r.View {
		return refusal(caller, r, "map", m.ID, "")
	}
	return nil
}

// CanEditMap: change the map, add and change its layers.
func (p Policy) CanEditMap(caller *User, m *Map) error {
	if r := p.MapRights(caller, m); !r.Edit {
		return refusal(caller, r, "map", m.ID, "map "+itoa64(m.ID)+" may be changed by its owner, an administrator, or a group with edit permission only")
	}
	return nil
}

// CanDeleteMap: the owner and administrators.
func (p Policy) CanDeleteMap(caller *User, m *Map) error {
	if isAdmin(caller) || isOwner(caller, m.OwnerID) {
		return nil
	}
	return refusal(caller, p.MapRights(caller, m), "map", m.ID, "only the owner or an administrator may delete map "+itoa64(m.ID))
}

// CanSetMapPermissions: on a hosted instance an administrator (spec
// "Create" of maps: "must be admin on GeoCommons"); on an appliance the
// owner, an administrator, or a holder of edit.
func (p Policy) CanSetMapPermissions(caller *User, m *Map) error {
	r := p.MapRights(caller, m)
	if isAdmin(caller) || (p.Mode == ModeAppliance && r.Edit) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	if !r.View {
		return Errorf(ENOTFOUND, "map %d not found", m.ID)
	}
	if p.Mode == ModeHosted {
		return Errorf(EFORBIDDEN, "permissions: only an administrator may share maps on this instance")
	}
	return Errorf(EFORBIDDEN, "permissions: only the owner, an administrator or a group with edit permission may share map %d", m.ID)
}

// MapSearchShows reports whether the search entry of m may show what its
// layer of dataset ds contributes (its extent, its feature count): only
// when everyone who may see the map may see the dataset. That is: the
// map's owner (owner, nil when m has none or the account is gone) may view
// ds, and every entry of the map's sharing list is covered by ds's, an
// entry for everyone by ds's entry for everyone, an entry for a group by
// ds's entry for that group or for everyone. Administrators see both
// anyway. ds nil (no such dataset) shows nothing, as a dataset not shown
// does, so that an entry does not tell whether an id exists.
//
// A search entry is stored once for every caller and every start of the
// instance, so the rule reads the sharing lists alone, as an appliance
// does: a hosted instance shows every dataset to everyone, but a map's
// entry there shows only those it would show on an appliance.
func MapSearchShows(owner *User, m *Map, ds *Dataset) bool {
	if ds == nil {
		return false
	}
	strict := Policy{Mode: ModeAppliance}
	if m.OwnerID != 0 && (owner == nil || owner.ID != m.OwnerID || !strict.DatasetRights(owner, ds).View) {
		return false
	}
	for _, e := range m.Permissions {
		if !e.Normalize().View {
			continue
		}
		// The rights of a caller who holds this entry of the map and no
		// other: anonymous for everyone, a member of that group alone.
		var holder *User
		if id, ok := e.GroupID(); ok {
			holder = &User{GroupIDs: []int64{id}}
		}
		if !granted(holder, ds.Permissions).View {
			return false
		}
	}
	return true
}

// CanShareDataset: change ds's sharing list to next. Sending the list it
// has already needs no right (clients echo whole objects back); a change
// needs CanSetDatasetPermissions.
func (p Policy) CanShareDataset(caller *User, ds *Dataset, next []Permission) error {
	if SamePermissions(ds.Permissions, next) {
		return nil
	}
	return p.CanSetDatasetPermissions(caller, ds)
}

// CanShareMap: change m's sharing list to next; as CanShareDataset.
func (p Policy) CanShareMap(caller *User, m *Map, next []Permission) error {
	if SamePermissions(m.Permissions, next) {
		return nil
	}
	return p.CanSetMapPermissions(caller, m)
}

func itoa64(n int64) string {
	if n < 0 {
		return "-" + itoa(int(-n))
	}
	return itoa(int(n))
}
