package segment

import (
	"fmt"
	"strconv"
	"strings"
)

// Tenant names a data set, as VictoriaLogs' AccountID and ProjectID do. The
// zero Tenant (0:0) is the default one.
type Tenant struct {
	AccountID, ProjectID uint32
}

// String returns "AccountID:ProjectID", the form ParseTenant reads and
// VictoriaLogs prints.
func (t Tenant) String() string {
	return strconv.FormatUint(uint64(t.AccountID), 10) + ":" + strconv.FormatUint(uint64(t.ProjectID), 10)
}

// ParseTenant reads "AccountID:ProjectID", or "AccountID" alone (ProjectID
// 0); "" is the default tenant 0:0. Both are decimal uint32.
func ParseTenant(s string) (Tenant, error) {
	var t Tenant
	if s == "" {
		return t, nil
	}
	acc, proj, _ := strings.Cut(s, ":")
	var err error
	if t.AccountID, err = parseID(acc); err != nil {
		return t, fmt.Errorf("cannot parse tenant %q: AccountID %w", s, err)
	}
	if t.ProjectID, err = parseID(proj); err != nil {
		return t, fmt.Errorf("cannot parse tenant %q: ProjectID %w", s, err)
	}
	return t, nil
}

// ParseTenantHeaders reads the tenant from the values of the AccountID and
// ProjectID HTTP headers, either of which may be empty (0).
func ParseTenantHeaders(account, project string) (Tenant, error) {
	var t Tenant
	var err error
	if t.AccountID, err = parseID(account); err != nil {
		return t, fmt.Errorf("cannot parse header AccountID: %w", err)
	}
	if t.ProjectID, err = parseID(project); err != nil {
		return t, fmt.Errorf("cannot parse header ProjectID: %w", err)
	}
	return t, nil
}

func parseID(s string) (uint32, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number from 0 to 4294967295", s)
	}
	return uint32(n), nil
}
