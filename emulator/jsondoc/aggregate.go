package jsondoc

import "math"

type aggKind uint8

const (
	aggCount aggKind = iota
	aggSum
	aggMin
	aggMax
	aggAvg
	// aggCountIf counts the documents for which its argument is true. The service's
	// hybrid search plans use it in their global statistics query, and its plans name it
	// "CountIf" (.NET SDK QueryPlanRetrieverTests: SELECT VALUE COUNTIF(c.valid)).
	aggCountIf
)

var aggregateFuncs = map[string]aggKind{
	"COUNT": aggCount, "SUM": aggSum, "MIN": aggMin, "MAX": aggMax, "AVG": aggAvg, "COUNTIF": aggCountIf,
}

// planName is the aggregate's name in a query plan.
func (k aggKind) planName() string {
	return [...]string{"Count", "Sum", "Min", "Max", "Average", "CountIf"}[k]
}

// aggState accumulates one aggregate over a group, with the service's
// rules: undefined values are skipped everywhere; COUNT counts the defined
// values; SUM and AVG become undefined once a value is not a number (SUM of
// nothing is 0, AVG of nothing undefined); MIN and MAX order across types
// as ORDER BY does and become undefined once a value is an array or an
// object.
type aggState struct {
	kind     aggKind
	count    int64
	isum     int64
	fsum     float64
	useFloat bool
	invalid  bool
	best     *Value
}

func (s *aggState) add(v *Value) {
	if v == nil || s.invalid {
		return
	}
	switch s.kind {
	case aggCount:
		s.count++
	case aggCountIf:
		if isBool(v, true) {
			s.count++
		}
	case aggSum, aggAvg:
		if v.Kind != KindNumber {
			s.invalid = true
			return
		}
		s.count++
		if !s.useFloat {
			if n, ok := parseInt64(v.Num); ok {
				if sum := s.isum + n; (s.isum >= 0) != (n >= 0) || (sum >= 0) == (n >= 0) {
					s.isum = sum
					return
				}
			}
			s.useFloat, s.fsum = true, float64(s.isum)
		}
		s.fsum += numberFloat(v.Num)
	case aggMin, aggMax:
		if v.Kind == KindArray || v.Kind == KindObject {
			s.invalid = true
			return
		}
		c := CompareOrder(v, s.best)
		if s.best == nil || (s.kind == aggMin && c < 0) || (s.kind == aggMax && c > 0) {
			s.best = v
		}
	}
}

func (s *aggState) result() *Value {
	if s.invalid {
		return nil
	}
	switch s.kind {
	case aggCount, aggCountIf:
		return intValue(s.count)
	case aggSum:
		if s.useFloat {
			return floatValue(s.fsum)
		}
		return intValue(s.isum)
	case aggAvg:
		if s.count == 0 {
			return nil
		}
		total := float64(s.isum)
		if s.useFloat {
			total = s.fsum
		}
		avg := total / float64(s.count)
		if math.IsInf(avg, 0) {
			return nil
		}
		return floatValue(avg)
	}
	return s.best
}
