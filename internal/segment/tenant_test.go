package segment

import (
	"strings"
	"testing"
)

func TestParseTenant(t *testing.T) {
	f := func(s string, want Tenant) {
		t.Helper()
		got, err := ParseTenant(s)
		if err != nil || got != want {
			t.Fatalf("ParseTenant(%q) = %v, %v; want %v", s, got, err, want)
		}
		if s != "" && strings.Contains(s, ":") && got.String() != s {
			t.Fatalf("%v.String() = %q, want %q", got, got.String(), s)
		}
	}
	f("", Tenant{})
	f("0:0", Tenant{})
	f("7", Tenant{7, 0})
	f("7:8", Tenant{7, 8})
	f("4294967295:1", Tenant{4294967295, 1})
	bad := func(s, want string) {
		t.Helper()
		if _, err := ParseTenant(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("ParseTenant(%q) error %v, want %q", s, err, want)
		}
	}
	bad("x", "AccountID")
	bad("1:x", "ProjectID")
	bad("-1:0", "AccountID")
	bad("4294967296", "AccountID")
	bad("1:2:3", "ProjectID")
	if tn, err := ParseTenantHeaders("3", ""); err != nil || tn != (Tenant{3, 0}) {
		t.Fatalf("ParseTenantHeaders: %v %v", tn, err)
	}
	if _, err := ParseTenantHeaders("", "abc"); err == nil || !strings.Contains(err.Error(), "header ProjectID") {
		t.Fatalf("ParseTenantHeaders bad: %v", err)
	}
}
