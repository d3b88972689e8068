package postgres_test

import (
	"testing"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(tb testing.TB) mapcommons.Services { return pgtest.Open(tb).Services() }

func TestContract(t *testing.T) { storetest.Run(t, open) }
