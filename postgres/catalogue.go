package postgres

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"mapcommons"
)

// The catalogue cache keeps the dataset rows FindDatasetByID read, which
// every request on a dataset begins with (authorization, the version its
// answer is cached under). A row is forty columns with three JSON
// documents, and the owner's login from users; what the cache asks of
// the database instead is the row's stamp: the transaction ids (xmin)
// of the two rows it was read from, one index lookup. PostgreSQL gives
// every new version of a row the id of the transaction that wrote it, so
// a stamp that is the same says that no write, by any server, by any
// statement (whether or not it moved the dataset's version), changed the
// row since it was cached: the cached row is the row.
//
// The check is made on every use rather than trusting notifications
// (LISTEN/NOTIFY): a notification reaches the other servers after the
// writer's commit, so a writer whose next request a load balancer sends
// to another server could be answered from before its write. The check
// reads in a snapshot taken after the request came, as the row's read
// would.

// rowStamp is the stamp of a row of datasetColumns.
const rowStamp = `d.xmin::text || '/' || coalesce(u.xmin::text, '')`

const selectStamp = `SELECT ` + rowStamp + datasetFrom + ` WHERE d.id = $1`

// maxCatalogue bounds the rows the catalogue cache keeps.
const maxCatalogue = 4096

type catalogue struct {
	mu   sync.Mutex
	rows map[int64]*datasetRow
	hits atomic.Int64 // finds answered from the cache (for the tests)
}

// find returns dataset id's row: the cached one when its stamp holds,
// else the row read whole (and cached). The dataset it returns is a copy
// the caller may change.
func (c *catalogue) find(ctx context.Context, q querier, id int64) (*mapcommons.Dataset, error) {
	if r := c.get(id); r != nil {
		var stamp string
		err := q.QueryRow(ctx, selectStamp, id).Scan(&stamp)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			c.drop(id)
			return nil, datasetNotFound(id)
		case err != nil:
			return nil, formatError(err)
		case stamp == r.stamp:
			c.hits.Add(1)
			return copyDataset(r.Dataset), nil
		}
	}
	r, err := findDataset(ctx, q, id, false)
	if err != nil {
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			c.drop(id)
		}
		return nil, err
	}
	c.put(r)
	return copyDataset(r.Dataset), nil
}

// copyDataset is a copy of ds whose changes, even of its attributes,
// stats and sharing list, do not reach ds.
func copyDataset(ds *mapcommons.Dataset) *mapcommons.Dataset {
	cp := *ds
	cp.Attributes, cp.Stats, cp.Permissions = slices.Clone(ds.Attributes), maps.Clone(ds.Stats), slices.Clone(ds.Permissions)
	cp.GeometryTypes = slices.Clone(ds.GeometryTypes)
	if ds.Extent != nil {
		e := *ds.Extent
		cp.Extent = &e
	}
	return &cp
}

func (c *catalogue) get(id int64) *datasetRow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rows[id]
}

// put keeps r: the newest read of a row replaces an older one, and a row
// read earlier than the one kept (two finds racing) only costs a full
// read at the next use, since its stamp is then not the database's.
func (c *catalogue) put(r *datasetRow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == nil {
		c.rows = map[int64]*datasetRow{}
	}
	if _, ok := c.rows[r.ID]; !ok && len(c.rows) >= maxCatalogue {
		for k := range c.rows { // any one goes
			delete(c.rows, k)
			break
		}
	}
	c.rows[r.ID] = r
}

func (c *catalogue) drop(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.rows, id)
}
