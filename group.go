package mapcommons

// Groups of users (spec "Group"): a name and members. Objects are shared
// with a group by a Permission entry naming its id; an administrator
// manages groups and their members.

import (
	"context"
	"strings"
	"time"
	"unicode"
)

// UserGroup is a named set of users. (The name Group is taken by the rows
// of grouped feature queries.)
type UserGroup struct {
	ID        int64
	Name      string
	CreatedAt time.Time
}

// GroupSummary is a group and how many members it has, as a listing of
// groups shows it.
type GroupSummary struct {
	UserGroup
	Members int64
}

// MaxGroupNameLen bounds a group's name in bytes.
const MaxGroupNameLen = 100

// NormalizeGroupName trims a group name and checks it: 1 to
// MaxGroupNameLen bytes, no control characters.
func NormalizeGroupName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", Errorf(EINVALID, "name: missing (a group needs a name)")
	case len(name) > MaxGroupNameLen:
		return "", Errorf(EINVALID, "name: longer than %d bytes", MaxGroupNameLen)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", Errorf(EINVALID, "name: may not hold control characters")
	}
	return name, nil
}

// GroupService stores groups and their members. A user's groups come back
// with the user (User.GroupIDs), so that a request knows its caller's
// groups from the one lookup that authenticates it.
type GroupService interface {
	// CreateGroup stores g and sets its ID and time; ECONFLICT when the
	// name is taken (ignoring case).
	CreateGroup(ctx context.Context, g *UserGroup) error
	// FindGroupByID returns ENOTFOUND when there is no such group.
	FindGroupByID(ctx context.Context, id int64) (*UserGroup, error)
	// FindGroups returns every group, ordered by name (ignoring case),
	// each with its number of members.
	FindGroups(ctx context.Context) ([]*GroupSummary, error)
	// FindGroupMembers returns the members of a group ordered by login;
	// ENOTFOUND when there is no such group.
	FindGroupMembers(ctx context.Context, id int64) ([]*User, error)
	// AddGroupMember makes the user a member of the group (a member already
	// is no error). ENOTFOUND, saying which, when the group or the user
	// does not exist.
	AddGroupMember(ctx context.Context, groupID, userID int64) error
	// RemoveGroupMember ends a membership. ENOTFOUND when the group does
	// not exist or the user is not a member of it.
	RemoveGroupMember(ctx context.Context, groupID, userID int64) error
	// DeleteGroup removes a group, its memberships, and the entries naming
	// it from the permissions of every dataset and map. ENOTFOUND when
	// there is no such group.
	DeleteGroup(ctx context.Context, id int64) error
}
