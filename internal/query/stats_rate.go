package query

import (
	"fmt"
	"math"
)

// parseRateArgs refuses arguments: rate() counts rows.
func (p *parser) parseRateArgs(_ *StatsFunc, args []string, argsPos int) error {
	if len(args) > 0 {
		return p.errorf(argsPos, "rate() takes no arguments")
	}
	return nil
}

// rateArgsString prints the (no) arguments of rate().
func rateArgsString(*StatsFunc) string { return "" }

// newRateColumn compiles rate into a countColumn (stats_count.go).
func newRateColumn(p *plan, st *PipeStats, f StatsFunc, _ []string, _ *memTracker) (statsColumn, error) {
	secs, err := rateSeconds(p, st, f)
	if err != nil {
		return nil, err
	}
	return &countColumn{rate: secs}, nil
}

// newRateSumColumn compiles rate_sum, sum per second, into a sumColumn
// (stats_sum.go).
func newRateSumColumn(p *plan, st *PipeStats, f StatsFunc, fields []string, _ *memTracker) (statsColumn, error) {
	secs, err := rateSeconds(p, st, f)
	if err != nil {
		return nil, err
	}
	return &sumColumn{fields: fields, rate: secs}, nil
}

// rateSeconds is what rate and rate_sum divide by: the seconds of a _time
// bucket of st, else of the query's time range (as VictoriaLogs'
// initRateFuncsFromTimeBucket), which must then have both bounds.
func rateSeconds(p *plan, st *PipeStats, f StatsFunc) (float64, error) {
	for _, b := range st.By {
		if b.Name == "_time" && b.BucketNs > 0 {
			return float64(b.BucketNs) / 1e9, nil
		}
	}
	secs := float64(p.timeMax-p.timeMin+1) / 1e9
	if !p.hasTimeRange || p.timeMax == math.MaxInt64 || p.timeMin == math.MinInt64 || secs <= 0 {
		return 0, fmt.Errorf("cannot compute %s: the query's _time filter must have both bounds", f.Result)
	}
	return secs, nil
}
