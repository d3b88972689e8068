package mapcommons

// This file decides who may do what: every permission rule of the service
// lives here, as pure functions of the caller and the object, so that the
// HTTP layer and the stores never decide on their own.

// Mode is the kind of instance (spec "Two kinds of instance").
type Mode string

// Instance kinds.
const (
	ModeHosted    Mode = "hosted"    // a public instance: reads need no credentials
	ModeAppliance Mode = "appliance" // a private instance: reads follow permissions
)

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool { return m == ModeHosted || m == ModeAppliance }

// Policy holds the instance settings the rules depend on.
type Policy struct {
	Mode   Mode
	Signup bool // whether anyone may create an account (hosted ignores false only for admins)
}

func errLogin() error { return Errorf(EUNAUTHORIZED, "authentication required") }

func isAdmin(u *User) bool { return u != nil && u.Admin }

func isOwner(u *User, ownerID int64) bool { return u != nil && ownerID != 0 && u.ID == ownerID }

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

// CanCreateDataset: any logged-in user.
func (p Policy) CanCreateDataset(caller *User) error {
	if caller == nil {
		return errLogin()
	}
	return nil
}

// CanViewDataset: see the dataset's metadata. Everyone on a hosted instance;
// on an appliance the owner and administrators (sharing comes with groups).
// A logged-in caller who may not view gets ENOTFOUND, so private datasets do
// not reveal that they exist.
func (p Policy) CanViewDataset(caller *User, ds *Dataset) error {
	if p.Mode == ModeHosted || isAdmin(caller) || isOwner(caller, ds.OwnerID) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(ENOTFOUND, "dataset %d not found", ds.ID)
}

// CanDownloadDataset: read its features and every download format; the same
// callers as view until permissions distinguish them.
func (p Policy) CanDownloadDataset(caller *User, ds *Dataset) error {
	return p.CanViewDataset(caller, ds)
}

// CanEditDataset: change metadata and features, or delete. The owner and
// administrators.
func (p Policy) CanEditDataset(caller *User, ds *Dataset) error {
	if isAdmin(caller) || isOwner(caller, ds.OwnerID) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	if err := p.CanViewDataset(caller, ds); err != nil {
		return err
	}
	return Errorf(EFORBIDDEN, "only the owner or an administrator may change dataset %d", ds.ID)
}

// sharedWith reports whether perms give everyone the right want picks.
func sharedWith(perms []Permission, want func(Permission) bool) bool {
	for _, e := range perms {
		if e.Group == GroupEveryone && want(e) {
			return true
		}
	}
	return false
}

// DefaultMapPermissions are the sharing entries of a new map: public on a
// hosted instance, private to its owner on an appliance.
func (p Policy) DefaultMapPermissions() []Permission {
	if p.Mode == ModeHosted {
		return []Permission{{Group: GroupEveryone, View: true, Download: true}}
	}
	return []Permission{}
}

// CanCreateMap: any logged-in user.
func (p Policy) CanCreateMap(caller *User) error {
	if caller == nil {
		return errLogin()
	}
	return nil
}

// CanViewMap: see and download a map (its JSON and KML). The owner,
// administrators, and everyone when the map is shared with everyone; a map
// that is not shared needs credentials (ENOTFOUND to another logged-in
// caller, so that it does not reveal that it exists).
func (p Policy) CanViewMap(caller *User, m *Map) error {
	if isAdmin(caller) || isOwner(caller, m.OwnerID) || sharedWith(m.Permissions, func(e Permission) bool { return e.View || e.Download || e.Edit }) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(ENOTFOUND, "map %d not found", m.ID)
}

// CanEditMap: change, delete, add and change layers. The owner and
// administrators.
func (p Policy) CanEditMap(caller *User, m *Map) error {
	if isAdmin(caller) || isOwner(caller, m.OwnerID) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	if err := p.CanViewMap(caller, m); err != nil {
		return err
	}
	return Errorf(EFORBIDDEN, "only the owner or an administrator may change map %d", m.ID)
}

// CanSetMapPermissions: on a hosted instance an administrator (spec "Create"
// of maps); on an appliance the owner or an administrator.
func (p Policy) CanSetMapPermissions(caller *User, m *Map) error {
	if isAdmin(caller) || (p.Mode == ModeAppliance && isOwner(caller, m.OwnerID)) {
		return nil
	}
	if caller == nil {
		return errLogin()
	}
	return Errorf(EFORBIDDEN, "permissions: only an administrator may share maps on this instance")
}
