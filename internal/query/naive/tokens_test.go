package naive

import "testing"

func TestMatchPhrase(t *testing.T) {
	f := func(s, phrase string, want bool) {
		t.Helper()
		if got := matchPhrase(s, phrase); got != want {
			t.Errorf("matchPhrase(%q, %q) = %v; want %v", s, phrase, got, want)
		}
	}
	// Whole words only.
	f("TimeOut error: giving up", "error", true)
	f("errors and timeouts happened", "error", false)
	f("xtimeout errorx suberror_timeout", "error", false)
	f("xtimeout errorx suberror_timeout", "timeout", false)
	f("error", "error", true)
	f("error:db", "error", true)
	f("error_db", "error", false)
	f("error1", "error", false)
	f("1error", "error", false)
	// Case-sensitive.
	f("ERROR TIMEOUT in upstream", "error", false)
	// Later occurrences are tried after a failed boundary.
	f("errors error", "error", true)
	// Phrases: boundaries only at the ends.
	f("cache miss for key", "cache miss", true)
	f("cache missing", "cache miss", false)
	f("xcache miss", "cache miss", false)
	// A phrase starting or ending with a non-word rune needs no boundary there.
	f("error:db", ":db", true)
	f("path \"C:\\temp\\x\" is", "\"C:\\temp\\x\"", true)
	f("a-b", "-", true)
	// Non-ASCII letters are word runes.
	f("le café noir", "café", true)
	f("le cafés noir", "café", false)
	f("用户 登录", "用户", true)
	f("用户登录", "用户", false)
	f("日志: ok", "日志", true)
	// Digits are word runes.
	f("port 5432 open", "5432", true)
	f("port 54321 open", "5432", false)
	f("1.5", "1", true)
	// The empty phrase matches only the empty value.
	f("", "", true)
	f("x", "", false)
	f("", "x", false)
}

func TestMatchPrefix(t *testing.T) {
	f := func(s, prefix string, want bool) {
		t.Helper()
		if got := matchPrefix(s, prefix); got != want {
			t.Errorf("matchPrefix(%q, %q) = %v; want %v", s, prefix, got, want)
		}
	}
	f("xtimeout errorx suberror_timeout", "err", true)
	f("suberror_timeout", "err", false)
	f("errors and timeouts", "err", true)
	f("ERRORS", "err", false)
	f("cache miss", "cache mi", true)
	f("warning", "warn", true)
	f("prewarn", "warn", false)
	f("a:b", ":b", true)
	// The empty prefix matches any non-empty value.
	f("x", "", true)
	f("", "", false)
}

func TestMatchSequence(t *testing.T) {
	f := func(s string, phrases []string, want bool) {
		t.Helper()
		if got := matchSequence(s, phrases); got != want {
			t.Errorf("matchSequence(%q, %q) = %v; want %v", s, phrases, got, want)
		}
	}
	f("upstream timeout after 3s", []string{"upstream", "timeout"}, true)
	f("upstream timeout after 3s", []string{"timeout", "upstream"}, false)
	f("user 42 logged in", []string{"user", "logged in"}, true)
	f("a a", []string{"a", "a"}, true)
	f("a", []string{"a", "a"}, false)
	f("anything", nil, true)
}
