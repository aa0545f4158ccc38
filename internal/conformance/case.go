// Package conformance loads the LogsQL conformance corpus (shared/conformance:
// cases recorded from VictoriaLogs v1.26.0) and compares query results with
// the recorded answers under the corpus README's rules.
//
// It knows nothing about how a result was produced: callers run the query
// themselves (the spate binary, the engine or the naive oracle) and hand the
// rows to Compare. Values are text throughout, as VictoriaLogs returns them.
package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// Case is one recorded query and its answer (one line of cases.jsonl).
type Case struct {
	ID    string
	Query string
	// Ordered is set where the answer's row order is fixed (a total sort, or
	// top with distinct hits); otherwise rows compare as a multiset.
	Ordered bool
	// Expected holds the rows VictoriaLogs returned, values as text.
	Expected []map[string]string
	// Approx, if not nil, is a note starting with "rel=X:": numeric values
	// then only need to agree within relative error X.
	Approx *string
	// Error, if not nil, is the HTTP status VictoriaLogs answered with; the
	// query must fail and Expected is empty.
	Error *int
}

// caseJSON is the on-disk shape of a case.
type caseJSON struct {
	ID       string           `json:"id"`
	Query    string           `json:"query"`
	Ordered  bool             `json:"ordered"`
	Expected []map[string]any `json:"expected"`
	Approx   *string          `json:"approx"`
	Error    *int             `json:"error"`
}

// LoadCases reads a cases.jsonl file: one JSON object per line, blank lines
// ignored. Expected values are turned into text by rule 1 of the README
// (they are all strings in the recorded corpus).
func LoadCases(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read cases: %w", err)
	}
	var cases []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	lineNum := 0
	for sc.Scan() {
		lineNum++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var cj caseJSON
		if err := json.Unmarshal(line, &cj); err != nil {
			return nil, fmt.Errorf("cannot parse case at %s:%d: %w", path, lineNum, err)
		}
		c := Case{
			ID:      cj.ID,
			Query:   cj.Query,
			Ordered: cj.Ordered,
			Approx:  cj.Approx,
			Error:   cj.Error,
		}
		for _, row := range cj.Expected {
			r := make(map[string]string, len(row))
			for k, v := range row {
				s, err := valueText(v)
				if err != nil {
					return nil, fmt.Errorf("case %s: field %q: %w", c.ID, k, err)
				}
				r[k] = s
			}
			c.Expected = append(c.Expected, r)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read cases: %w", err)
	}
	return cases, nil
}

// ParseNDJSONRows parses output lines (one JSON object each) into rows of
// text values by rule 1: a string stays as it is, a number becomes its
// decimal text, true/false become "true"/"false" and null becomes "". A
// nested object or array becomes its compact JSON text. Blank lines are
// skipped. Fields are kept even when their text is empty; Compare drops them.
func ParseNDJSONRows(data []byte) ([]map[string]string, error) {
	var rows []map[string]string
	lineNum := 0
	for line := range bytes.Lines(data) {
		lineNum++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("line %d: cannot parse JSON object: %w", lineNum, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d: unexpected data after the JSON object", lineNum)
		}
		if obj == nil {
			return nil, fmt.Errorf("line %d: not a JSON object", lineNum)
		}
		row := make(map[string]string, len(obj))
		for k, v := range obj {
			s, err := valueText(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: field %q: %w", lineNum, k, err)
			}
			row[k] = s
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// valueText turns a decoded JSON value into text by rule 1.
func valueText(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case json.Number:
		return v.String(), nil
	case float64:
		// Decoders without UseNumber; the shortest text that round-trips.
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
}
