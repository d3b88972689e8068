package sqlite

import (
	"context"
	"sync"

	"mapcommons"
)

// catalog caches dataset rows in memory: every feature query needs its
// dataset's schema and segment, and reading them from SQLite each time would
// cost more than the query. The store is the only writer of its database,
// so it drops an entry whenever it changes the row.
type catalog struct {
	mu    sync.RWMutex
	gen   uint64 // bumped by every change, so a read racing a write is not kept
	items map[int64]catEntry
	locks sync.Map // dataset id → *sync.Mutex serialising changes of its features
}

type catEntry struct {
	ds      *mapcommons.Dataset
	segment string
}

// dataset returns a copy of the dataset's row and its segment's name.
func (db *DB) dataset(ctx context.Context, id int64) (*mapcommons.Dataset, string, error) {
	c := &db.cat
	c.mu.RLock()
	e, ok := c.items[id]
	gen := c.gen
	c.mu.RUnlock()
	if !ok {
		ds, seg, err := findDatasetRow(ctx, db.read, id)
		if err != nil {
			return nil, "", err
		}
		e = catEntry{ds: ds, segment: seg}
		c.mu.Lock()
		if c.gen == gen {
			if c.items == nil {
				c.items = map[int64]catEntry{}
			}
			c.items[id] = e
		}
		c.mu.Unlock()
	}
	cp := *e.ds
	return &cp, e.segment, nil
}

// forget drops a dataset from the cache after a change (all of them when
// id is 0).
func (db *DB) forget(id int64) {
	c := &db.cat
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if id == 0 {
		c.items = nil
		return
	}
	delete(c.items, id)
}

// lockFeatures serialises the changes of one dataset's features.
func (db *DB) lockFeatures(id int64) func() {
	m, _ := db.cat.locks.LoadOrStore(id, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}
