package benchenv

import (
	"runtime"
	"testing"
)

func TestHumanBytes(t *testing.T) {
	f := func(n int64, want string) {
		t.Helper()
		if got := HumanBytes(n); got != want {
			t.Fatalf("HumanBytes(%d) = %q; want %q", n, got, want)
		}
	}
	f(0, "0 B")
	f(1023, "1023 B")
	f(1024, "1.0 KiB")
	f(1536, "1.5 KiB")
	f(2<<30, "2.0 GiB")
	f(5<<40, "5.0 TiB")
	f(3<<50, "3.0 PiB")
}

func TestDescribe(t *testing.T) {
	m := Describe()
	if m.OS != runtime.GOOS || m.CPUs != runtime.NumCPU() || m.GoVersion != runtime.Version() {
		t.Fatalf("Describe() = %+v", m)
	}
	if runtime.GOOS == "linux" && (m.MemTotal <= 0 || m.Kernel == "") {
		t.Fatalf("Describe() on Linux lacks memory or kernel: %+v", m)
	}
}
