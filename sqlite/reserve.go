package sqlite

// Room kept in reserve for signing in on a full disk. When the disk is
// full every write fails (507), and so would the sign-in of the
// administrator who comes to delete what fills it. The store keeps a file
// of reserveSize bytes of written zeros (blocks taken, not a sparse file)
// beside its database; a session that cannot be written for want of room
// deletes it and is written again in the room it leaves, which holds
// thousands of session rows. The reserve is made again when the store
// opens and when expired sessions are swept, if there is room.

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"mapcommons"
)

// reserveSize is the room kept in reserve.
const reserveSize = 4 << 20

// reserve is the file of the room in reserve.
type reserve struct {
	mu   sync.Mutex
	path string
}

// ensure makes the reserve file when it is missing and there is room for
// it (a partial one is removed: the disk is full).
func (r *reserve) ensure() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fi, err := os.Stat(r.path); err == nil && fi.Size() == reserveSize {
		return
	}
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	zeros := make([]byte, 64<<10)
	for n := 0; n < reserveSize && err == nil; n += len(zeros) {
		_, err = f.Write(zeros)
	}
	// No sync: the file system counts the blocks as taken once written.
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(r.path)
	}
}

// spend deletes the reserve file and runs write in the room it leaves,
// reporting false (write not run) when there was no reserve to give up.
// The lock keeps ensure from taking the room back meanwhile.
func (r *reserve) spend(write func() error) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if os.Remove(r.path) != nil {
		return false, nil
	}
	return true, write()
}

// newReserve is the reserve of the database at dbPath, made if missing.
func newReserve(dbPath string) *reserve {
	r := &reserve{path: filepath.Join(filepath.Dir(dbPath), "reserve")}
	r.ensure()
	return r
}

// withReserve runs write, and once more after giving up the reserve when
// it fails for want of room (EFULL).
func (db *DB) withReserve(write func() error) error {
	err := write()
	var e *mapcommons.Error
	if errors.As(err, &e) && e.Code == mapcommons.EFULL {
		if spent, again := db.reserve.spend(write); spent {
			return again
		}
	}
	return err
}
