package postgres

// Migrations are the embedded migrations, for the tests of migrating.
var Migrations = migrations
