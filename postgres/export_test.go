package postgres

import "time"

// Migrations are the embedded migrations, for the tests of migrating.
var Migrations = migrations

// MaxConns is the size of db's pool of connections.
func MaxConns(db *DB) int32 { return db.pool.Config().MaxConns }

// SetDropLockTimeout sets how long dropping a features table waits for
// its readers, for one test.
func SetDropLockTimeout(tb interface{ Cleanup(func()) }, d time.Duration) {
	old := dropLockTimeout
	dropLockTimeout = d
	tb.Cleanup(func() { dropLockTimeout = old })
}
