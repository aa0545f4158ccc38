package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestSortRotated(t *testing.T) {
	in := []string{
		"logs/app.log", "logs/app.log.1", "logs/app.log.10.gz", "logs/app.log.2.gz", "logs/app.log.3.zst",
		"logs/app.log-20261124", "logs/app.log-20261123.gz", "logs/app.log.2026-11-25",
		"logs/api.log", "logs/api.log.1", "logs/z.log", "logs/app-2026-11-24.log", "logs/app-2026-11-23.log",
		"logs/other/app.log.1", "logs/other/app.log",
	}
	want := []string{
		"logs/api.log.1", "logs/api.log",
		"logs/app-2026-11-23.log", "logs/app-2026-11-24.log",
		"logs/app.log.10.gz", "logs/app.log.3.zst", "logs/app.log.2.gz", "logs/app.log.1",
		"logs/app.log-20261123.gz", "logs/app.log-20261124", "logs/app.log.2026-11-25", "logs/app.log",
		"logs/other/app.log.1", "logs/other/app.log",
		"logs/z.log",
	}
	got := slices.Clone(in)
	sortRotated(got)
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
