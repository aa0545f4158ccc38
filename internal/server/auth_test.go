package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/segment"
)

// authTestTokens is the token file of TestRouteAuth; "w34" is a prefix of
// no other token, "r" is a prefix of "r34" (lookup compares whole tokens).
const authTestTokens = `# every kind of token
all
rw34 tenant=3:4
w34  tenant=3:4 write
r34  tenant=3:4 read
r    read
w    write   # a trailing comment
`

// authServer serves paths through s.route with a handler that answers
// "TENANT", or "TENANT/bound" when boundTenant says the token is bound to
// TENANT.
func authServer(t *testing.T, tokens string, paths ...string) *httptest.Server {
	t.Helper()
	toks, err := ParseAuthTokens("tokens", strings.NewReader(tokens))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, Config{AuthTokens: toks})
	mux := http.NewServeMux()
	for _, p := range paths {
		mux.Handle(p, s.route(p, func(w http.ResponseWriter, r *http.Request) {
			tn := tenantOf(r)
			if b, ok := boundTenant(r); ok {
				if b != tn {
					t.Errorf("%s: tenantOf %s, boundTenant %s", p, tn, b)
				}
				fmt.Fprintf(w, "%s/bound", tn)
				return
			}
			fmt.Fprint(w, tn)
		}))
	}
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// authGet requests path with token (none if "") and tenant headers
// (none if ""), and returns the status and the body, trimmed.
func authGet(t *testing.T, url, token, tenant string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if tenant != "" {
		acc, proj, _ := strings.Cut(tenant, ":")
		req.Header.Set("AccountID", acc)
		req.Header.Set("ProjectID", proj)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestRouteAuth: every kind of token at every kind of path, with tenant
// headers absent, naming the token's tenant (3:4) and naming another
// (5:6). A want is "200 TENANT" (the tenant the handler sees, /bound if
// boundTenant reports it) or the status alone.
func TestRouteAuth(t *testing.T) {
	paths := []string{"/insert/t", "/select/t", "/select/tenant_ids", "/other"}
	ts := authServer(t, authTestTokens, paths...)
	open := authServer(t, "", paths...)
	var (
		anyT   = [3]string{"200 0:0", "200 3:4", "200 5:6"}
		bound  = [3]string{"200 3:4/bound", "200 3:4/bound", "403"}
		no     = [3]string{"403", "403", "403"}
		unauth = [3]string{"401", "401", "401"}
	)
	type tc struct {
		token, path string
		want        [3]string // headers: absent, 3:4, 5:6
	}
	cases := []tc{
		{"all", "/insert/t", anyT},
		{"all", "/select/t", anyT},
		{"all", "/select/tenant_ids", anyT},
		{"all", "/other", anyT},

		{"rw34", "/insert/t", bound},
		{"rw34", "/select/t", bound},
		{"rw34", "/select/tenant_ids", no},
		{"rw34", "/other", bound},

		{"w34", "/insert/t", bound},
		{"w34", "/select/t", no},
		{"w34", "/select/tenant_ids", no},
		{"w34", "/other", no},

		{"r34", "/insert/t", no},
		{"r34", "/select/t", bound},
		{"r34", "/select/tenant_ids", no},
		{"r34", "/other", no},

		{"r", "/insert/t", no},
		{"r", "/select/t", anyT},
		{"r", "/select/tenant_ids", anyT},
		{"r", "/other", no},

		{"w", "/insert/t", anyT},
		{"w", "/select/t", no},
		{"w", "/select/tenant_ids", no},
		{"w", "/other", no},
	}
	for _, p := range paths {
		cases = append(cases, tc{"", p, unauth}, tc{"nope", p, unauth}, tc{"r3", p, unauth})
	}
	for _, c := range cases {
		for i, tenant := range []string{"", "3:4", "5:6"} {
			code, body := authGet(t, ts.URL+c.path, c.token, tenant)
			got := fmt.Sprint(code)
			if code == 200 {
				got += " " + body
			}
			if got != c.want[i] {
				t.Errorf("token %q %s tenant %q: got %q (%s), want %q", c.token, c.path, tenant, got, body, c.want[i])
			}
		}
	}
	// No tokens configured: anyone may do anything in any tenant, as
	// before tokens had tenants.
	for _, p := range paths {
		for i, tenant := range []string{"", "3:4", "5:6"} {
			for _, tok := range []string{"", "whatever"} {
				code, body := authGet(t, open.URL+p, tok, tenant)
				if got := fmt.Sprint(code, " ", body); got != anyT[i] {
					t.Errorf("no tokens, token %q %s tenant %q: got %q, want %q", tok, p, tenant, got, anyT[i])
				}
			}
		}
	}
}

// TestRouteAuthAnswers: what a refused request is told, and the corners
// of the tenant headers with a bound token.
func TestRouteAuthAnswers(t *testing.T) {
	ts := authServer(t, "Tok34 tenant=3:4\nTok30 tenant=3 write\nTokR read\n", "/insert/t", "/select/t", "/select/tenant_ids")
	f := func(token, path string, hdr []string, code int, want string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code || !strings.Contains(string(b), want) {
			t.Errorf("%s %s %v: got %d %s, want %d with %q", token, path, hdr, resp.StatusCode, b, code, want)
		}
		if code != 200 && strings.Contains(string(b), token) {
			t.Errorf("%s %s %v: the answer quotes the token: %s", token, path, hdr, b)
		}
	}
	f("TokR", "/insert/t", nil, 403, "the bearer token may only read; /insert/t needs write")
	f("Tok30", "/select/t", nil, 403, "the bearer token may only write; /select/t needs read")
	f("Tok34", "/insert/t", []string{"AccountID", "5", "ProjectID", "6"}, 403,
		"the bearer token is bound to tenant 3:4; the AccountID and ProjectID headers name 5:6")
	f("Tok34", "/select/tenant_ids", nil, 403, "the bearer token is bound to tenant 3:4; /select/tenant_ids lists every tenant")
	// One header alone names a tenant, the other ID being 0, as without
	// tokens: AccountID 3 is 3:0.
	f("Tok34", "/insert/t", []string{"AccountID", "3"}, 403, "headers name 3:0")
	f("Tok30", "/insert/t", []string{"AccountID", "3"}, 200, "3:0/bound")
	f("Tok30", "/insert/t", []string{"ProjectID", "0"}, 403, "headers name 0:0")
	f("Tok34", "/insert/t", []string{"AccountID", "x"}, 400, "cannot parse header AccountID")
	f("TokWrong", "/insert/t", nil, 401, "missing or wrong bearer token")
	f("Tok34", "/insert/t", []string{"Authorization", "Tok34"}, 401, "missing or wrong bearer token") // no "Bearer "
}

func TestRouteNeeds(t *testing.T) {
	f := func(path string, need Perm, allTenants bool) {
		t.Helper()
		n, a := routeNeeds(path)
		if n != need || a != allTenants {
			t.Errorf("routeNeeds(%q) = %s, %v; want %s, %v", path, n, a, need, allTenants)
		}
	}
	f("/insert/jsonline", PermWrite, false)
	f("/insert/elasticsearch/_bulk", PermWrite, false)
	f("/api/v1/ingest", PermWrite, false)
	f("/select/logsql/query", PermRead, false)
	f("/select/logsql/tail", PermRead, false)
	f("/select/tenant_ids", PermRead, true)
	f("/select/tenant_ids/x", PermRead, false)
	f("/insert", permAll, false)
	f("/selectx", permAll, false)
	f("/api/v1/other", permAll, false)
	f("/", permAll, false)
}

// tokenLine prints t as a token file line, for tests only (it shows the
// secret).
func tokenLine(t AuthToken) string {
	s := t.Token
	if t.Bound {
		s += " tenant=" + t.Tenant.String()
	}
	return s + " " + t.perm().String()
}

func TestParseAuthTokens_Success(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		toks, err := ParseAuthTokens("F", strings.NewReader(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var lines []string
		for _, tok := range toks {
			lines = append(lines, tokenLine(tok))
		}
		if got := strings.Join(lines, "\n"); got != want {
			t.Errorf("%q:\ngot  %q\nwant %q", in, got, want)
		}
	}
	f("", "")
	f("# only a comment\n\n   \n", "")
	f("abc", "abc read,write")
	f("  abc  \n", "abc read,write")
	f("a\nb\n", "a read,write\nb read,write")
	f("a read", "a read")
	f("a write", "a write")
	f("a read,write", "a read,write")
	f("a write,read", "a read,write")
	f("a tenant=3:4", "a tenant=3:4 read,write")
	f("a\ttenant=3:4\twrite", "a tenant=3:4 write")
	f("a read tenant=0:0", "a tenant=0:0 read")
	f("a tenant=7", "a tenant=7:0 read,write")
	f("a tenant=4294967295:1 write", "a tenant=4294967295:1 write")
	f("a write # ingest only\n#b\n  # c\n", "a write")
	f("a #read", "a read,write")
	f("a:b=c,d read", "a:b=c,d read") // the first field is the token, whatever it holds
	f("\xff\xfe", "\xff\xfe read,write")
}

func TestParseAuthTokens_Failure(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		toks, err := ParseAuthTokens("F", strings.NewReader(in))
		if err == nil {
			t.Fatalf("%q: no error, got %d tokens", in, len(toks))
		}
		if err.Error() != want {
			t.Errorf("%q:\ngot  %s\nwant %s", in, err, want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error quotes the token: %s", in, err)
		}
	}
	f("a\n# c\n secret rw\n", `F:3: unknown permission "rw" (want read, write or read,write)`)
	f("secret readwrite", `F:1: unknown permission "readwrite" (want read, write or read,write)`)
	f("secret read,", `F:1: unknown permission "read," (want read, write or read,write)`)
	f("secret READ", `F:1: unknown permission "READ" (want read, write or read,write)`)
	f("secret read,read", `F:1: permission "read,read" names read twice`)
	f("secret read write", `F:1: a second permission "write" (want one of read, write or read,write)`)
	f("secret tenant=1:2 tenant=1:2", `F:1: tenant= given twice`)
	f("secret tenant=", `F:1: tenant= needs ACCOUNT:PROJECT`)
	f("secret tenant=x:1", `F:1: cannot parse tenant "x:1": AccountID "x" is not a number from 0 to 4294967295`)
	f("secret tenant=1:-2", `F:1: cannot parse tenant "1:-2": ProjectID "-2" is not a number from 0 to 4294967295`)
	f("secret account=1", `F:1: unknown option "account=1" (want tenant=ACCOUNT:PROJECT)`)
	f("secret =1", `F:1: unknown option "=1" (want tenant=ACCOUNT:PROJECT)`)
	f("secret read\nother\n\nsecret write\n", `F:4: the token of line 1 again`)
	f("secret\n"+strings.Repeat("x", 70<<10), `cannot read F: bufio.Scanner: token too long`)
}

// TestAuthTokensConfig: New refuses tokens it could not tell apart.
func TestAuthTokensConfig(t *testing.T) {
	f := func(toks []AuthToken, want string) {
		t.Helper()
		_, err := New(Config{DataDir: t.TempDir(), AuthTokens: toks})
		if err == nil || err.Error() != want {
			t.Errorf("%d tokens: got %v, want %s", len(toks), err, want)
		}
	}
	f([]AuthToken{{Token: "a"}, {Token: ""}}, "cannot start the server: auth token 2 is empty")
	f([]AuthToken{{Token: "a"}, {Token: "b"}, {Token: "a", Perm: PermRead}}, "cannot start the server: auth tokens 1 and 3 are the same")
	f([]AuthToken{{Token: "a", Perm: 4}}, "cannot start the server: auth token 1 has unknown permission Perm(4)")
	s, err := New(Config{DataDir: t.TempDir(), AuthTokens: []AuthToken{{Token: "a", Tenant: segment.Tenant{AccountID: 1}, Bound: true, Perm: PermWrite}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
