package postgres

// Migrations are the embedded migrations, for the tests of migrating.
var Migrations = migrations

// MaxConns is the size of db's pool of connections.
func MaxConns(db *DB) int32 { return db.pool.Config().MaxConns }
