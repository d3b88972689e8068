package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mapcommons"
)

// TestFormatError checks the translation of PostgreSQL's errors into the
// domain's codes, wrapped or not.
func TestFormatError(t *testing.T) {
	other := errors.New("connection reset")
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{pgx.ErrNoRows, mapcommons.ENOTFOUND},
		{fmt.Errorf("scan: %w", pgx.ErrNoRows), mapcommons.ENOTFOUND},
		{&pgconn.PgError{Code: "23505"}, mapcommons.ECONFLICT},
		{fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"}), mapcommons.ECONFLICT},
		{&pgconn.PgError{Code: "23503"}, mapcommons.ENOTFOUND},
		{&pgconn.PgError{Code: "53100"}, mapcommons.EFULL},
		{&pgconn.PgError{Code: "57014"}, mapcommons.ETIMEOUT},
		{&pgconn.PgError{Code: "22021"}, mapcommons.EINVALID},
		{&pgconn.PgError{Code: "42P01"}, mapcommons.EINTERNAL},
		{other, mapcommons.EINTERNAL},
	} {
		if got := mapcommons.ErrorCode(formatError(c.err)); got != c.want {
			t.Errorf("formatError(%v) has code %q, want %q", c.err, got, c.want)
		}
	}
	if err := formatError(other); err != other {
		t.Errorf("an unknown error is not returned as it is: %v", err)
	}
}
