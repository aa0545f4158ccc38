package cli

import "testing"

func TestParseSize(t *testing.T) {
	f := func(in string, want int64) {
		t.Helper()
		got, err := parseSize(in)
		if err != nil {
			t.Fatalf("parseSize(%q): %v", in, err)
		}
		if got != want {
			t.Fatalf("parseSize(%q) = %d, want %d", in, got, want)
		}
	}
	f("0", 0)
	f("4096", 4096)
	f("64KiB", 64<<10)
	f("8MiB", 8<<20)
	f("1GiB", 1<<30)
	f("1gib", 1<<30)
	f("2GB", 2e9)
	f("1.5G", 3<<29)
	f("512 MiB", 512<<20)
	f("100b", 100)

	for _, bad := range []string{"", "x", "-1", "1XB", "GiB"} {
		if _, err := parseSize(bad); err == nil {
			t.Fatalf("parseSize(%q): want an error", bad)
		}
	}
}

func TestFormatSize(t *testing.T) {
	f := func(in int64, want string) {
		t.Helper()
		if got := formatSize(in); got != want {
			t.Fatalf("formatSize(%d) = %q, want %q", in, got, want)
		}
	}
	f(0, "0")
	f(1000, "1000B")
	f(4096, "4KiB")
	f(1<<30, "1GiB")
	f(3<<29, "1.5GiB")
}
