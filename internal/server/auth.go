package server

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spate-io/spate/internal/segment"
)

// Perm is what a bearer token may do: read (the /select/ API), write (the
// /insert/ API), or both.
type Perm uint8

const (
	PermRead Perm = 1 << iota
	PermWrite

	permAll = PermRead | PermWrite
)

// String returns "read", "write" or "read,write", as the token file spells
// them.
func (p Perm) String() string {
	switch p {
	case PermRead:
		return "read"
	case PermWrite:
		return "write"
	case permAll:
		return "read,write"
	}
	return fmt.Sprintf("Perm(%d)", uint8(p))
}

// AuthToken is one bearer token a client may send (Authorization: Bearer
// TOKEN), with what it may do and where.
type AuthToken struct {
	// Token is the secret; non-empty, distinct within Config.AuthTokens.
	Token string
	// Tenant, if Bound, is the only tenant the token acts in: a request
	// without AccountID and ProjectID headers acts in Tenant, one whose
	// headers name another tenant gets 403, and so does /select/tenant_ids
	// (it lists every tenant). An unbound token acts in the tenant its
	// headers name (default 0:0).
	Tenant segment.Tenant
	Bound  bool
	// Perm is what the token may do; 0 means PermRead|PermWrite.
	Perm Perm
}

func (t AuthToken) perm() Perm {
	if t.Perm == 0 {
		return permAll
	}
	return t.Perm
}

// ParseAuthTokens reads the format of serve --auth-token-file, one token a
// line:
//
//	TOKEN [tenant=ACCOUNT:PROJECT] [read|write|read,write]
//
// Fields are separated by spaces or tabs. Blank lines and lines starting
// with '#' are skipped, and a field starting with '#' after the token ends
// the line. A bare TOKEN (the format before tenants and permissions) may
// act in any tenant, chosen by the AccountID and ProjectID headers, and
// may read and write. tenant= binds the token to one tenant (see
// AuthToken.Tenant; "tenant=3" is 3:0). Without a permission word the
// token may read and write. A token may appear only once.
//
// name (the file's path) and the line number begin each error, as in
// `tokens:3: unknown permission "rw"`; errors never quote a token. The
// result is empty, not an error, if r holds no token.
func ParseAuthTokens(name string, r io.Reader) ([]AuthToken, error) {
	var toks []AuthToken
	lineOf := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		t, err := parseAuthTokenFields(fields)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if prev, ok := lineOf[t.Token]; ok {
			return nil, fmt.Errorf("%s:%d: the token of line %d again", name, n, prev)
		}
		lineOf[t.Token] = n
		toks = append(toks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	return toks, nil
}

func parseAuthTokenFields(fields []string) (AuthToken, error) {
	t := AuthToken{Token: fields[0]}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "#") {
			break
		}
		if k, v, ok := strings.Cut(f, "="); ok {
			if k != "tenant" {
				return t, fmt.Errorf("unknown option %q (want tenant=ACCOUNT:PROJECT)", f)
			}
			if t.Bound {
				return t, errors.New("tenant= given twice")
			}
			if v == "" {
				return t, errors.New("tenant= needs ACCOUNT:PROJECT")
			}
			tn, err := segment.ParseTenant(v)
			if err != nil {
				return t, err
			}
			t.Tenant, t.Bound = tn, true
			continue
		}
		if t.Perm != 0 {
			return t, fmt.Errorf("a second permission %q (want one of read, write or read,write)", f)
		}
		for w := range strings.SplitSeq(f, ",") {
			var p Perm
			switch w {
			case "read":
				p = PermRead
			case "write":
				p = PermWrite
			default:
				return t, fmt.Errorf("unknown permission %q (want read, write or read,write)", f)
			}
			if t.Perm&p != 0 {
				return t, fmt.Errorf("permission %q names %s twice", f, w)
			}
			t.Perm |= p
		}
	}
	return t, nil
}

// checkAuthTokens reports tokens that are empty or repeated, or that have
// unknown permission bits. Its errors never quote a token.
func checkAuthTokens(toks []AuthToken) error {
	seen := make(map[string]int, len(toks))
	for i, t := range toks {
		if t.Token == "" {
			return fmt.Errorf("cannot start the server: auth token %d is empty", i+1)
		}
		if t.Perm&^permAll != 0 {
			return fmt.Errorf("cannot start the server: auth token %d has unknown permission %s", i+1, t.Perm)
		}
		if j, ok := seen[t.Token]; ok {
			return fmt.Errorf("cannot start the server: auth tokens %d and %d are the same", j+1, i+1)
		}
		seen[t.Token] = i
	}
	return nil
}

// authTable finds the AuthToken a request carries.
type authTable struct {
	toks []AuthToken
	sums [][sha256.Size]byte // of toks[i].Token
}

// openAccess is the token of every request when there are no tokens.
var openAccess = &AuthToken{Perm: permAll}

func newAuthTable(toks []AuthToken) *authTable {
	a := &authTable{toks: toks, sums: make([][sha256.Size]byte, len(toks))}
	for i, t := range toks {
		a.sums[i] = sha256.Sum256([]byte(t.Token))
	}
	return a
}

// lookup returns the token r carries, openAccess if no tokens are
// configured, or nil for a missing or wrong token. It compares the token's
// SHA-256 with every configured one in constant time, so that how long it
// takes tells nothing of which token matched, or how much of one did, or
// its length.
func (a *authTable) lookup(r *http.Request) *AuthToken {
	if len(a.toks) == 0 {
		return openAccess
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(tok))
	found := -1
	for i := range a.sums {
		found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(sum[:], a.sums[i][:]), i, found)
	}
	if found < 0 {
		return nil
	}
	return &a.toks[found]
}

// routeNeeds says what a token must allow for route(path, …): PermWrite
// under /insert/ and for /api/v1/ingest (spate's ingest alias), PermRead
// under /select/; and for /select/tenant_ids, which lists every tenant,
// also that it is not bound to one (allTenants). Any other path needs
// PermRead|PermWrite, so that an endpoint nobody classified is closed to
// limited tokens rather than open to them. Paths mux serves without route
// (/healthz, /readyz, /metrics, the 404 page) take no token at all.
func routeNeeds(path string) (need Perm, allTenants bool) {
	switch {
	case strings.HasPrefix(path, "/insert/"), path == "/api/v1/ingest", path == "/uploads/":
		return PermWrite, false
	case path == "/select/tenant_ids", path == "/data/":
		return PermRead, true
	case strings.HasPrefix(path, "/select/"), strings.HasPrefix(path, "/internal/select/"), strings.HasPrefix(path, "/files/"):
		return PermRead, false
	}
	return permAll, false
}

type boundKey struct{}

// boundTenant returns the tenant r's bearer token is bound to, if it is
// (AuthToken.Bound). route has already made tenantOf(r) that tenant; a
// handler that lists or crosses tenants refuses such a request.
func boundTenant(r *http.Request) (segment.Tenant, bool) {
	t, ok := r.Context().Value(boundKey{}).(segment.Tenant)
	return t, ok
}
