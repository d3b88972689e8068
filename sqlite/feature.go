package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"mapcommons"
)

// FeatureService implements mapcommons.FeatureService on the store.
type FeatureService struct{ db *DB }

// NewFeatureService returns the feature service of db.
func NewFeatureService(db *DB) *FeatureService { return &FeatureService{db: db} }

var _ mapcommons.FeatureService = (*FeatureService)(nil)

// ScanFeatures implements mapcommons.FeatureService. The dataset's schema
// and its features are read in one transaction, so one snapshot.
func (s *FeatureService) ScanFeatures(ctx context.Context, datasetID int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	tx, err := s.db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	var attrJSON string
	if err := tx.QueryRowContext(ctx, `SELECT attributes FROM datasets WHERE id = ?`, datasetID).Scan(&attrJSON); err != nil {
		return datasetNotFound(formatError(err), datasetID)
	}
	var attrs []mapcommons.Attribute
	if err := json.Unmarshal([]byte(attrJSON), &attrs); err != nil {
		return err
	}
	cols := []string{"pos", "geom"}
	for i := range attrs {
		cols = append(cols, attrColumn(i))
	}
	limit := q.Limit
	if limit < 0 {
		limit = -1
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+featureTable(datasetID)+
		` WHERE pos >= ? ORDER BY pos LIMIT ?`, max(q.Offset, 0), limit)
	if err != nil {
		return datasetNotFound(formatError(err), datasetID)
	}
	defer rows.Close()
	f := &mapcommons.Feature{Values: make([]any, len(attrs))}
	var geom sql.RawBytes
	dest := make([]any, 2+len(attrs))
	dest[0], dest[1] = &f.Position, &geom
	for i := range attrs {
		dest[2+i] = &f.Values[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		f.Geometry = geom
		for i, a := range attrs {
			f.Values[i] = fromColumn(a.Type, f.Values[i])
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return formatError(rows.Err())
}

// fromColumn turns a stored value back into the domain's type for t.
func fromColumn(t mapcommons.AttrType, v any) any {
	switch x := v.(type) {
	case int64:
		switch t {
		case mapcommons.AttrBoolean:
			return x != 0
		case mapcommons.AttrFloat:
			return float64(x)
		}
	case []byte:
		return string(x)
	}
	return v
}
