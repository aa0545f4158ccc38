package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/conformance"
)

// conformanceDir is ../shared/conformance seen from this package.
var conformanceDir = filepath.Join("..", "..", "..", "shared", "conformance")

// knownConformanceDiffs lists the cases spate answers differently from
// VictoriaLogs on purpose, with the reason. The test fails if one of them
// starts to pass, so the list stays honest. docs/conformance.md repeats it.
var knownConformanceDiffs = map[string]string{}

// TestQueryConformance runs every case of the VictoriaLogs conformance corpus
// through `spate query` and compares the output under the corpus's rules.
func TestQueryConformance(t *testing.T) {
	casesPath := filepath.Join(conformanceDir, "cases.jsonl")
	logs := filepath.Join(conformanceDir, "logs.ndjson")
	if _, err := os.Stat(casesPath); err != nil {
		t.Skipf("no conformance corpus at %s: %v", conformanceDir, err)
	}
	cases, err := conformance.LoadCases(casesPath)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	passed := 0
	for _, workers := range []string{"1", "2"} {
		for _, c := range cases {
			args := []string{"query", "--format", "ndjson", "--time-field", "ts", "--msg-field", "msg",
				"--workers", workers, "--chunk-size", "64KiB", "--now", "2026-01-03T00:00:00Z", "--", c.Query, logs}
			code, out, stderr := runCLI(t, args...)
			err := checkCase(c, code, out, stderr)
			reason, known := knownConformanceDiffs[c.ID]
			switch {
			case err == nil && known:
				t.Errorf("%s now passes; remove it from knownConformanceDiffs (%s)", c.ID, reason)
			case err != nil && !known:
				failed = append(failed, fmt.Sprintf("%s (workers=%s): %s\n    query: %s", c.ID, workers, err, c.Query))
			case err == nil:
				passed++
			}
		}
	}
	sort.Strings(failed)
	t.Logf("conformance: %d of %d case runs pass, %d known differences per run", passed, 2*len(cases), len(knownConformanceDiffs))
	if len(failed) > 0 {
		t.Errorf("%d conformance case runs fail:\n%s", len(failed), strings.Join(failed, "\n"))
	}
}

func checkCase(c conformance.Case, code int, out []byte, stderr string) error {
	if c.Error != nil {
		if code == ExitOK {
			return fmt.Errorf("want an error (VictoriaLogs answered %d), got exit 0", *c.Error)
		}
		return nil
	}
	if code != ExitOK {
		return fmt.Errorf("exit %d: %s", code, strings.TrimSpace(stderr))
	}
	rows, err := conformance.ParseNDJSONRows(out)
	if err != nil {
		return err
	}
	return conformance.Compare(c, rows)
}
