package mapcommons

// Feature query limits.
const (
	DefaultFeatureLimit = 30
	MaxFeatureLimit     = 10000
)

// FeatureQuery is the parsed, validated form of the parameters of
// GET /datasets/{id}/features: which features, in which order.
type FeatureQuery struct {
	Offset int64 // zero-based position of the first feature returned
	Limit  int64 // at most this many; negative means no limit
}
