package query

import (
	"strconv"
	"strings"
	"testing"
)

// formatTokens prints tokens as "kind:text@pos" with a leading '_' for
// tokens preceded by whitespace.
func formatTokens(toks []lexToken) string {
	kinds := map[lexKind]string{lexEOF: "eof", lexWord: "w", lexQuoted: "q", lexPunct: "p", lexBadQuote: "bad"}
	a := make([]string, len(toks))
	for i, t := range toks {
		s := kinds[t.kind] + ":" + t.text
		if t.space {
			s = "_" + s
		}
		a[i] = s + "@" + strconv.Itoa(t.pos)
	}
	return strings.Join(a, " ")
}

func TestLexQuery(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := formatTokens(lexQuery(in)); got != want {
			t.Fatalf("lexQuery(%q)\ngot:  %s\nwant: %s", in, got, want)
		}
	}
	f("", "eof:@0")
	f("   ", "_eof:@3")
	f("error", "w:error@0 eof:@5")
	f("http.ua:curl", "w:http.ua@0 p::@7 w:curl@8 eof:@12")
	f("10.0.0.1", "w:10.0.0.1@0 eof:@8")
	f("café 用户", "w:café@0 _w:用户@6 eof:@12")
	f("worker-010", "w:worker@0 p:-@6 w:010@7 eof:@10")
	f("/api/v1", "p:/@0 w:api@1 p:/@4 w:v1@5 eof:@7")
	f(`a "b c" 'd\'e' `+"`f\\g`", `w:a@0 _q:b c@2 _q:d'e@8 _q:f\g@15 eof:@20`)
	f(`'"redis"'`, `q:"redis"@0 eof:@9`)
	f(`"\u00e9"`, `q:é@0 eof:@8`)
	f(`f:!="x"`, `w:f@0 p::@1 p:!=@2 q:x@4 eof:@7`)
	f(`f:!~"x" =~ ! -`, `w:f@0 p::@1 p:!~@2 q:x@4 _p:=~@8 _p:!@11 _p:-@13 eof:@14`)
	f(`>=5`, `p:>@0 p:=@1 w:5@2 eof:@3`)
	f("a # comment\nb", "w:a@0 _w:b@12 eof:@13")
	f("a#b", "w:a@0 _eof:@3")
	f("a\tb\nc", "w:a@0 _w:b@2 _w:c@4 eof:@5")
	f(`"abc`, `bad:"@0 w:abc@1 eof:@4`)
	f(`don't`, `w:don@0 bad:'@3 w:t@4 eof:@5`)
	f("a\xffb", "w:a@0 p:\xff@1 w:b@2 eof:@3")
	f("(a|b)", "p:(@0 w:a@1 p:|@2 w:b@3 p:)@4 eof:@5")
}

func TestIsWordText(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := isWordText(in); got != want {
			t.Fatalf("isWordText(%q) = %v; want %v", in, got, want)
		}
	}
	f("error", true)
	f("http.ua", true)
	f("café", true)
	f("用户", true)
	f("_time", true)
	f("", false)
	f("a b", false)
	f("a-b", false)
	f("a*", false)
	f("a\xff", false)
}
