package naive

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/conformance"
	"github.com/spate-io/spate/internal/query"
)

// conformanceDir is shared/conformance seen from this package's directory.
var conformanceDir = filepath.Join("..", "..", "..", "..", "shared", "conformance")

// conformanceNow is the fixed "now" the corpus runs with. No case uses a
// relative time filter, so any time after the data works.
var conformanceNow = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)

// knownDiffs lists the cases where the oracle deliberately differs from
// VictoriaLogs, with the reason. They are expected to fail; the test fails
// if one starts passing, so the list stays honest.
var knownDiffs = map[string]string{}

// TestConformance runs every case of shared/conformance/cases.jsonl through
// query.Parse and Run and compares the rows with VictoriaLogs' answers.
func TestConformance(t *testing.T) {
	cases, err := conformance.LoadCases(filepath.Join(conformanceDir, "cases.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("conformance corpus not found in %s", conformanceDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(conformanceDir, "logs.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for line := range bytes.Lines(data) {
		lines = append(lines, strings.TrimSuffix(string(line), "\n"))
	}
	opts := Options{MsgField: "msg", TimeField: "ts", Now: conformanceNow}
	// Parse the 16k lines once; run(q, parseLines(lines)) is Run(q, lines).
	logs := parseLines(lines, opts)

	passed := 0
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			err := runCase(c, logs, opts)
			reason, known := knownDiffs[c.ID]
			switch {
			case err == nil && known:
				t.Errorf("case %s passes now; remove it from knownDiffs (%s)", c.ID, reason)
			case err == nil:
				passed++
			case known:
				t.Logf("known difference (%s): %s", reason, err)
			default:
				t.Errorf("query %q: %s", c.Query, err)
			}
		})
	}
	t.Logf("%d of %d cases pass; %d known differences", passed, len(cases), len(knownDiffs))
}

// runCase runs one case over logs and returns nil if the result matches.
func runCase(c conformance.Case, logs []row, opts Options) error {
	q, err := query.Parse(c.Query, opts.Now)
	var rows []map[string]string
	if err == nil {
		rows, err = run(q, logs, opts)
	}
	if c.Error != nil {
		if err == nil {
			return conformance.Compare(c, rows)
		}
		return nil
	}
	if err != nil {
		return err
	}
	return conformance.Compare(c, rows)
}
