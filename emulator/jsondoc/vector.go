package jsondoc

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// VectorDistance, as Microsoft Learn documents it
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/vectordistance):
//
//	VectorDistance(<vector_expr_1>, <vector_expr_2> [, <bool_expr> [, <obj_expr>]])
//
// returns the similarity score of two vectors: cosine from -1 (least similar) to +1
// (most similar), dot product from -inf (least) to +inf (most), Euclidean from 0 (most
// similar) to +inf (least). The distance function and data type are those of the
// container's vector embedding policy for the vector's path, unless <obj_expr>
// ({"distanceFunction": …, "dataType": …, "searchListSizeMultiplier": …,
// "quantizedVectorListMultiplier": …, "filterPriority": …}) overrides them.
//
// The emulator always computes the exact (flat, brute-force) score, whatever the
// container's vector index (flat, quantizedFlat, diskANN) and whatever <bool_expr>
// says: the service's quantization and DiskANN approximations are not modelled, so a
// result here is what the service returns with brute force (true).
//
// What the service does with inputs that are not two numeric vectors of the same length
// is documented only for multidimensional arrays: "the function doesn't return a
// SimilarityScore value and doesn't return an error" (the Remarks of the page above), so
// the score is undefined. The emulator makes it undefined too for other non-vectors,
// non-numeric elements, vectors of different lengths and an all-zero vector under
// cosine; whether the service does the same for those is not documented. The vectors
// are compared whatever the policy's dimensions say (not documented either).
//
// A path without an embedding policy and no distanceFunction override is scored with
// cosine and float32: what the service does there is not documented, so this is a choice,
// not the service's (the .NET SDK's NonStreamingOrderByQueryTests give a distanceFunction
// when the container has no policy).

// VectorEmbedding is one entry of a container's vector embedding policy.
type VectorEmbedding struct {
	Path             string // "/vector1", "/data/vector2"
	DataType         string // float32, float16, int8, uint8
	DistanceFunction string // cosine, dotproduct, euclidean
	Dimensions       int
}

// BindOptions is what the container tells a query beyond its parameters.
type BindOptions struct {
	// VectorEmbeddings is the container's vector embedding policy: VectorDistance
	// takes its distance function and data type from the entry for its vector's path.
	VectorEmbeddings []VectorEmbedding
	// Now is the clock of GetCurrentDateTime and the other current-time functions
	// (the emulator's injectable clock); nil reads the wall clock.
	Now func() time.Time
}

type distanceFunction uint8

const (
	distanceCosine distanceFunction = iota
	distanceDotProduct
	distanceEuclidean
)

var distanceFunctions = map[string]distanceFunction{
	"cosine":     distanceCosine,
	"dotproduct": distanceDotProduct,
	"euclidean":  distanceEuclidean,
}

var vectorDataTypes = map[string]bool{"float32": true, "float16": true, "int8": true, "uint8": true}

// vectorOptionKeys are the documented properties of VectorDistance's <obj_expr>; only
// distanceFunction and dataType change an exact score.
var vectorOptionKeys = map[string]bool{
	"distancefunction": true, "datatype": true, "searchlistsizemultiplier": true,
	"quantizedvectorlistmultiplier": true, "filterpriority": true,
}

// similarity reports whether a higher score means more similar (cosine, dot product);
// Euclidean is a distance, lower is more similar.
func (f distanceFunction) similarity() bool { return f != distanceEuclidean }

// score computes the function over two vectors of the same, non-zero length.
func (f distanceFunction) score(a, b []float64) float64 {
	switch f {
	case distanceDotProduct:
		var dot float64
		for i := range a {
			dot += a[i] * b[i]
		}
		return dot
	case distanceEuclidean:
		var sum float64
		for i := range a {
			d := a[i] - b[i]
			sum += d * d
		}
		return math.Sqrt(sum)
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb)) // NaN for a zero vector: undefined
}

// vectorSpec is how one VectorDistance call scores, resolved when the query is bound.
type vectorSpec struct {
	fn       distanceFunction
	dataType string
}

// vectorDistanceExpr is a VectorDistance call, or a call of _VectorScore, its form in
// the component queries of the service's hybrid search plan (.NET SDK
// QueryPlanRetrieverTests: RRF(FullTextScore(…), VectorDistance(c.image, [1, 2, 3]))
// plans a component "… ORDER BY _VectorScore(c.image, [1, 2, 3])"). _VectorScore takes
// VectorDistance's arguments and scores as it does, under the same policy; what differs
// is ORDER BY, where it sorts by its value as any number does (DESC when no direction is
// written, as the plan's bare "ORDER BY _VectorScore(…)" is "orderBy": ["Descending"]).
type vectorDistanceExpr struct {
	args     []expr // 2 to 4
	internal bool   // _VectorScore
}

func (x *vectorDistanceExpr) children() []expr { return x.args }

func (x *vectorDistanceExpr) appendSQL(b []byte) []byte {
	if x.internal {
		b = append(b, "_VectorScore("...)
	} else {
		b = append(b, "VectorDistance("...)
	}
	b = appendList(b, x.args)
	return append(b, ')')
}

func (x *vectorDistanceExpr) eval(env *evalEnv) *Value {
	a, ok := numericVector(x.args[0].eval(env))
	if !ok {
		return nil
	}
	b, ok := numericVector(x.args[1].eval(env))
	if !ok || len(a) != len(b) {
		return nil
	}
	// Bind resolves every call (Program.vectors); an environment without them (none is
	// built outside a bound program) scores with the default, cosine.
	return floatValue(env.vectors[x].fn.score(a, b))
}

// numericVector reads a one-dimensional, non-empty array of numbers.
func numericVector(v *Value) ([]float64, bool) {
	if v == nil || v.Kind != KindArray || len(v.Arr) == 0 {
		return nil, false
	}
	out := make([]float64, len(v.Arr))
	for i, e := range v.Arr {
		if e == nil || e.Kind != KindNumber {
			return nil, false
		}
		out[i] = numberFloat(e.Num)
	}
	return out, true
}

// vectorDistance parses the arguments of VectorDistance, the name already read.
func (p *sqlParser) vectorDistance(name token) (expr, error) {
	p.next() // "("
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	args, err := p.exprList(")")
	if err != nil {
		return nil, err
	}
	if len(args) < 2 || len(args) > 4 {
		return nil, invalidQuery(name.pos, "VectorDistance takes 2 to 4 arguments (two vectors, an optional brute-force boolean and an optional options object), got %d", len(args))
	}
	x := &vectorDistanceExpr{args: args, internal: strings.HasPrefix(name.text, "_")}
	if len(args) == 4 {
		if _, ok := args[3].(*objectExpr); !ok {
			return nil, invalidQuery(name.pos, "VectorDistance's fourth argument must be an object literal such as {'distanceFunction': 'cosine'}, found %s", sqlText(args[3]))
		}
	}
	return x, nil
}

// resolve returns the spec of one call: the embedding policy of its vector's path, then
// the override of its options object.
func (x *vectorDistanceExpr) resolve(params map[string]*Value, policy []VectorEmbedding) (vectorSpec, error) {
	spec := vectorSpec{fn: distanceCosine, dataType: "float32"}
	for _, a := range x.args[:2] {
		path := policyPath(a)
		if path == "" {
			continue
		}
		for _, e := range policy {
			if e.Path != path {
				continue
			}
			if f, ok := distanceFunctions[strings.ToLower(e.DistanceFunction)]; ok {
				spec.fn = f
			}
			if e.DataType != "" {
				spec.dataType = strings.ToLower(e.DataType)
			}
		}
		break
	}
	if len(x.args) < 4 {
		return spec, nil
	}
	opts := x.args[3].eval(&evalEnv{params: params})
	if opts == nil || opts.Kind != KindObject {
		return spec, fmt.Errorf("VectorDistance's options %s are not an object", sqlText(x.args[3]))
	}
	for _, m := range opts.Obj {
		key := strings.ToLower(m.Key)
		if !vectorOptionKeys[key] {
			return spec, fmt.Errorf("VectorDistance has no option %q: the options are distanceFunction, dataType, searchListSizeMultiplier, quantizedVectorListMultiplier and filterPriority", m.Key)
		}
		switch key {
		case "distancefunction":
			s, _ := str(m.Val)
			f, ok := distanceFunctions[strings.ToLower(s)]
			if !ok {
				return spec, fmt.Errorf("VectorDistance's distanceFunction must be cosine, dotproduct or euclidean, found %s", m.Val.AppendJSON(nil))
			}
			spec.fn = f
		case "datatype":
			s, _ := str(m.Val)
			if !vectorDataTypes[strings.ToLower(s)] {
				return spec, fmt.Errorf("VectorDistance's dataType must be float32, float16, int8 or uint8, found %s", m.Val.AppendJSON(nil))
			}
			spec.dataType = strings.ToLower(s)
		}
	}
	return spec, nil
}

// policyPath is the embedding policy path of a document path with static property
// steps (c.data.vector2 is "/data/vector2"), or "".
func policyPath(x expr) string {
	steps := docPath(x)
	if steps == nil {
		return ""
	}
	var b strings.Builder
	for _, s := range steps {
		if s.IsIndex {
			return ""
		}
		b.WriteByte('/')
		b.WriteString(s.Name)
	}
	return b.String()
}

// bindVectors resolves every VectorDistance call of the query against the container's
// policy, and the direction each ORDER BY item sorts its values in.
func (p *Program) bindVectors(opts BindOptions) error {
	var err error
	var walk func(x expr)
	walk = func(x expr) {
		if x == nil || err != nil {
			return
		}
		if v, ok := x.(*vectorDistanceExpr); ok {
			var spec vectorSpec
			if spec, err = v.resolve(p.params, opts.VectorEmbeddings); err != nil {
				return
			}
			if p.vectors == nil {
				p.vectors = map[*vectorDistanceExpr]vectorSpec{}
			}
			p.vectors[v] = spec
		}
		for _, c := range x.children() {
			walk(c)
		}
	}
	q := p.q
	if q.Where != nil {
		walk(q.Where.root)
	}
	walk(q.sel.value)
	for _, it := range q.sel.items {
		walk(it.x)
	}
	for _, g := range q.groupBy {
		walk(g)
	}
	for _, o := range q.orderBy {
		walk(o.x)
	}
	if q.rank != nil {
		for _, c := range q.rank.comps {
			walk(c)
		}
	}
	if err != nil {
		return err
	}
	p.desc = make([]bool, len(q.orderBy))
	for i, o := range q.orderBy {
		p.desc[i] = o.desc
		if v, ok := o.x.(*vectorDistanceExpr); ok && v.internal {
			p.desc[i] = o.desc || !o.explicit
		} else if ok && p.vectors[v].fn.similarity() {
			// ORDER BY VectorDistance sorts from the most similar to the least
			// (Learn's VectorDistance examples; ASC alike, DESC reverses it: the .NET
			// SDK's NonStreamingOrderByQueryTests.VectorDistanceTestsAsync expects one
			// order for ASC under all three functions and its reverse for DESC, a test
			// marked Ignore there for want of a new emulator build, so the intent of
			// the service's team rather than a recorded answer), so a similarity's
			// values go from the highest down.
			p.desc[i] = !o.desc
		}
	}
	return nil
}

// similarity reports whether a bound VectorDistance call scores a similarity (higher
// is more similar: cosine, dot product) rather than a distance (Euclidean).
func (p *Program) similarity(x *vectorDistanceExpr) bool { return p.vectors[x].fn.similarity() }

// orderByScore reports whether an ORDER BY item is a score the service ranks by
// (VectorDistance), which ParseQuery accepts beside document paths.
func orderByScore(x expr) bool {
	_, ok := x.(*vectorDistanceExpr)
	return ok
}

// NonStreamingOrderBy reports whether the query orders by a vector score: the service's
// plan marks it hasNonStreamingOrderBy, and a client merges ranges by buffering the
// TOP (or OFFSET + LIMIT) best rows of all of them.
func (q *Query) NonStreamingOrderBy() bool {
	for _, o := range q.orderBy {
		if orderByScore(o.x) {
			return true
		}
	}
	return false
}
