package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// chromePath returns the headless Chromium to drive (SPATE_CHROME, else
// Debian's chromium-headless-shell), or skips.
func chromePath(t *testing.T) string {
	if p := os.Getenv("SPATE_CHROME"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/lib/chromium/chromium-headless-shell", "chromium-headless-shell"} {
		if q, err := exec.LookPath(p); err == nil {
			return q
		}
	}
	t.Skip("no headless Chromium (apt install chromium-headless-shell, or set SPATE_CHROME)")
	return ""
}

// browser starts a headless Chromium and returns a context to drive it.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromePath(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(1400, 900),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first call starts the browser, on a context without a timeout
	// (a timeout there would stop the browser); later ones are bounded.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("cannot start %s: %v", chromePath(t), err)
	}
	ctx, cancel3 := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel3)
	return ctx
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// until waits until a JavaScript expression is true in the page.
func until(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))
}

// steps runs actions, failing the test at the first error.
func steps(t *testing.T, ctx context.Context, a ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, a...); err != nil {
		t.Fatal(err)
	}
}

// apiRows runs a query over the API, as the page does, and returns the
// rows.
func apiRows(t *testing.T, base string, args url.Values) []map[string]string {
	t.Helper()
	resp, err := http.PostForm(base+"/select/logsql/query", args)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rows []map[string]string
	dec := json.NewDecoder(resp.Body)
	for dec.More() {
		var r map[string]string
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestUIBrowser drives the web page in a real headless Chromium: the rows,
// the histogram and the fields it shows are the API's; clicking a field
// value adds a filter; a shared URL reproduces the view; a bad query shows
// its error at its column; lines holding HTML or script are shown as
// text, never run; live tail shows lines as they are stored; the controls
// have labels. With SPATE_UI_SCREENSHOT=FILE it saves a screenshot.
func TestUIBrowser(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	// After the server: cleanups run last first, so the browser (and its
	// open tail) is gone before the server waits for its connections.
	ctx := browser(t)
	now := time.Now().UTC()
	var body strings.Builder
	levels := []string{"info", "info", "warn", "error"}
	for i := range 120 {
		msg := fmt.Sprintf("request %d served", i)
		switch i {
		case 7:
			msg = `<script>window.__xss=1</script>`
		case 8:
			msg = `<img src=x onerror="window.__xss=2">`
		case 9, 117:
			msg = "用户登录失败 ログイン失敗 (user 42)"
		case 113:
			msg = "Ошибка входа: неверный пароль"
		}
		line, _ := json.Marshal(map[string]string{
			"_time": now.Add(-time.Duration(120-i) * 20 * time.Second).Format(time.RFC3339Nano),
			"_msg":  msg, "level": levels[i%4], "service": []string{"api", "web", "auth"}[i%3],
		})
		body.Write(line)
		body.WriteByte('\n')
	}
	if r := post(t, ts.URL+"/insert/jsonline?_stream_fields=service", []byte(body.String())); r.code != 200 {
		t.Fatalf("ingest: %d %+v", r.code, r.rep)
	}
	start, end := now.Add(-2*time.Hour).Format(time.RFC3339), now.Add(time.Minute).Format(time.RFC3339)
	page := func(q url.Values) string { return ts.URL + "/ui/?" + q.Encode() }
	done := until(`/rows|error|Error/.test(document.getElementById("status").textContent)`)
	str := func(expr string) string { return eval[string](t, ctx, expr) }
	strs := func(expr string) []string { return eval[[]string](t, ctx, expr) }

	// The rows and the histogram are the API's.
	steps(t, ctx,
		chromedp.Navigate(page(url.Values{"q": {"*"}, "range": {"abs"}, "start": {start}, "end": {end}})),
		done,
		until(`document.getElementById("hitsbox").dataset.total !== undefined`),
	)
	status := str(`document.getElementById("status").textContent`)
	// Not asserted (no timing in tests), reported: the issue asks for a
	// first paint under 200 ms on loopback.
	t.Logf("first contentful paint %.0f ms; %s", eval[float64](t, ctx, `(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`), status)
	msgs := strs(`[...document.querySelectorAll('td[data-field="_msg"]')].map(td => td.textContent)`)
	total := str(`document.getElementById("hitsbox").dataset.total`)
	xss := str(`String(window.__xss)`)
	api := apiRows(t, ts.URL, url.Values{"query": {"*"}, "start": {start}, "end": {end}, "limit": {"1000"}})
	if len(msgs) != len(api) || len(api) != 120 {
		t.Fatalf("the page shows %d rows, the API %d (status %q)", len(msgs), len(api), status)
	}
	want := map[string]bool{}
	for _, r := range api {
		want[r["_msg"]] = true
	}
	for _, m := range msgs {
		if !want[m] {
			t.Errorf("the page shows a row the API does not: %q", m)
		}
	}
	if total != "120" {
		t.Errorf("histogram total %s, want 120", total)
	}
	if xss != "undefined" {
		t.Errorf("a log line ran as script: window.__xss = %s", xss)
	}
	shown := strings.Join(msgs, "\n")
	for _, s := range []string{`<script>window.__xss=1</script>`, `<img src=x onerror="window.__xss=2">`, "用户登录失败"} {
		if !strings.Contains(shown, s) {
			t.Errorf("the page does not show %q as text", s)
		}
	}
	// Every control has a label; table cells take the keyboard.
	unlabelled := strs(`[...document.querySelectorAll("input, select, textarea, button")].filter(e =>
		!(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.textContent.trim()).map(e => e.id || e.outerHTML.slice(0, 60))`)
	if len(unlabelled) > 0 || !eval[bool](t, ctx, `document.querySelector("td.val").tabIndex === 0`) {
		t.Errorf("controls without a label: %v, or table cells not focusable", unlabelled)
	}

	// Clicking a field's value adds its filter and runs the query.
	steps(t, ctx,
		chromedp.Click(chromedp.CSS(`details.facet[data-field="level"] li:first-child button`)),
		until(`document.getElementById("q").value.includes("level:=")`),
		until(`document.getElementById("cancel").disabled`),
		done,
	)
	q := str(`document.getElementById("q").value`)
	levelsShown := strs(`[...new Set([...document.querySelectorAll('td[data-field="level"]')].map(td => td.textContent))]`)
	if !strings.HasPrefix(q, `level:="`) || len(levelsShown) != 1 || !strings.Contains(q, levelsShown[0]) {
		t.Errorf("after a facet click: query %q, levels shown %v", q, levelsShown)
	}

	// A shared URL reproduces the query and the view.
	steps(t, ctx,
		chromedp.Navigate(page(url.Values{"q": {`level:=error`}, "range": {"abs"}, "start": {start}, "end": {end}, "view": {"raw"}})),
		done,
		until(`document.getElementById("cancel").disabled`),
	)
	qv := str(`document.getElementById("q").value`)
	raw := str(`document.querySelector("#results pre").textContent`)
	lines := strings.Split(strings.TrimSpace(raw), "\n")
	if qv != "level:=error" || len(lines) != 30 || !strings.Contains(lines[0], `"level":"error"`) {
		t.Errorf("shared URL: query %q, %d raw lines: %.200s", qv, len(lines), raw)
	}

	// A row's details offer its context: the logs around it in its
	// stream (stream_context), as the API gives them.
	steps(t, ctx,
		chromedp.Navigate(page(url.Values{"q": {`"request 60 served"`}, "range": {"abs"}, "start": {start}, "end": {end}})),
		done,
		until(`document.getElementById("cancel").disabled`),
		chromedp.Click(chromedp.CSS(`tr[data-row="0"] td.x button`)),
		chromedp.Click(chromedp.CSS(`tr.detail button.context`)),
		until(`document.getElementById("q").value.includes("stream_context")`),
		done,
		until(`document.getElementById("cancel").disabled`),
	)
	cq := str(`document.getElementById("q").value`)
	around := strs(`[...document.querySelectorAll('td[data-field="_msg"]')].map(td => td.textContent)`)
	apiAround := apiRows(t, ts.URL, url.Values{"query": {cq}, "start": {start}, "end": {end}, "limit": {"1000"}})
	if len(around) != 21 || len(apiAround) != 21 || !slices.Contains(around, "request 60 served") || !slices.Contains(around, "request 30 served") || slices.Contains(around, "request 61 served") {
		t.Errorf("context of row 60: query %q, the page shows %d rows %q, the API %d", cq, len(around), around, len(apiAround))
	}

	// Dragging across the histogram zooms into that range: the query
	// runs again on it, and the URL holds it.
	steps(t, ctx,
		chromedp.Navigate(page(url.Values{"q": {"*"}, "range": {"abs"}, "start": {start}, "end": {end}})),
		done,
		until(`document.querySelector("#hits .u-over") && document.getElementById("cancel").disabled`),
	)
	box := eval[[]float64](t, ctx, `(r => [r.left, r.top, r.width, r.height])(document.querySelector("#hits .u-over").getBoundingClientRect())`)
	x0, x1, y := box[0]+box[2]*0.55, box[0]+box[2]*0.75, box[1]+box[3]/2
	steps(t, ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x0, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (x0+x1)/2, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x1, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x1, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		until(`new URLSearchParams(location.search).get("start") !== `+strconv.Quote(start)),
		done,
		until(`document.getElementById("cancel").disabled`),
	)
	zs, ze := eval[string](t, ctx, `new URLSearchParams(location.search).get("start")`), eval[string](t, ctx, `new URLSearchParams(location.search).get("end")`)
	zoomed := apiRows(t, ts.URL, url.Values{"query": {"*"}, "start": {zs}, "end": {ze}, "limit": {"1000"}})
	if n := len(strs(`[...document.querySelectorAll('td[data-field="_msg"]')].map(td => td.textContent)`)); zs <= start || ze >= end || n != len(zoomed) || n == 0 || n >= 120 {
		t.Errorf("after a drag over the histogram: range %s..%s (was %s..%s), %d rows shown, the API has %d", zs, ze, start, end, n, len(zoomed))
	}

	// The keyboard: Enter on a focused value filters on it.
	steps(t, ctx,
		chromedp.Focus(chromedp.CSS(`td.val[data-field="service"]`)),
		chromedp.KeyEvent("\r"),
		until(`document.getElementById("q").value.includes("service:=")`),
		done,
		until(`document.getElementById("cancel").disabled`),
	)

	// A stats query is drawn over time, one line per series.
	steps(t, ctx,
		chromedp.Navigate(page(url.Values{"q": {`* | stats by (level) count() hits`}, "range": {"abs"}, "start": {start}, "end": {end}})),
		done,
		until(`document.getElementById("chartbox").dataset.series !== undefined`),
	)
	if n := str(`document.getElementById("chartbox").dataset.series`); n != "3" {
		t.Errorf("the stats chart has %s series, want 3 (one per level)", n)
	}
	if eval[bool](t, ctx, `document.getElementById("chartbox").hidden || !document.querySelector("#chart .u-legend")`) {
		t.Error("the stats chart is not shown with its legend")
	}

	// A bad query shows the server's error at its column.
	steps(t, ctx,
		chromedp.SetValue(chromedp.ID("q"), `* | stats by (`),
		chromedp.Click(chromedp.ID("run")),
		until(`!document.getElementById("qerr").hidden`),
	)
	errText, caret := str(`document.getElementById("qerrmsg").textContent`), str(`document.getElementById("qerrpos").textContent`)
	if !strings.Contains(errText, "column") || !strings.HasSuffix(strings.TrimRight(caret, "\n"), "^") {
		t.Errorf("error %q, caret %q", errText, caret)
	}

	// Live tail: a line stored after the tail starts appears.
	steps(t, ctx,
		chromedp.Click(chromedp.CSS(`.views button[data-view="table"]`)),
		chromedp.SetValue(chromedp.ID("q"), `service:=auth`),
		chromedp.Click(chromedp.ID("tail")),
		until(`document.getElementById("status").textContent.startsWith("Tail")`),
	)
	line := fmt.Sprintf(`{"_time":%q,"_msg":"fresh tailed line","service":"auth","level":"info"}`, time.Now().UTC().Format(time.RFC3339Nano))
	resp, err := http.Post(ts.URL+"/insert/jsonline?_stream_fields=service", "application/x-ndjson", strings.NewReader(line+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	steps(t, ctx, until(`[...document.querySelectorAll('td[data-field="_msg"]')].some(td => td.textContent === "fresh tailed line")`))
	if tailed := strs(`[...new Set([...document.querySelectorAll('td[data-field="service"]')].map(td => td.textContent))]`); len(tailed) != 1 || tailed[0] != "auth" {
		t.Errorf("tail of service:=auth shows services %v", tailed)
	}
	// Pause keeps the rows coming but still; resuming shows them.
	steps(t, ctx, chromedp.Click(chromedp.ID("pause")), until(`document.getElementById("status").textContent.startsWith("Paused")`))
	post2 := func(msg string) {
		line := fmt.Sprintf(`{"_time":%q,"_msg":%q,"service":"auth"}`, time.Now().UTC().Format(time.RFC3339Nano), msg)
		resp, err := http.Post(ts.URL+"/insert/jsonline?_stream_fields=service", "application/x-ndjson", strings.NewReader(line+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	post2("while paused")
	time.Sleep(2500 * time.Millisecond) // the tail's refresh interval is 1 s
	if eval[bool](t, ctx, `[...document.querySelectorAll('td[data-field="_msg"]')].some(td => td.textContent === "while paused")`) {
		t.Error("a paused tail drew a new row")
	}
	steps(t, ctx,
		chromedp.Click(chromedp.ID("pause")),
		until(`[...document.querySelectorAll('td[data-field="_msg"]')].some(td => td.textContent === "while paused")`),
	)
	// Cancel ends the tail.
	steps(t, ctx,
		chromedp.Click(chromedp.ID("cancel")),
		until(`document.getElementById("status").textContent.startsWith("Cancelled") && document.getElementById("tail").getAttribute("aria-pressed") === "false"`),
	)
	post2("after cancel")
	time.Sleep(2500 * time.Millisecond)
	if eval[bool](t, ctx, `[...document.querySelectorAll('td[data-field="_msg"]')].some(td => td.textContent === "after cancel")`) {
		t.Error("a cancelled tail drew a new row")
	}

	// Tab moves from the query to Run.
	steps(t, ctx, chromedp.Focus(chromedp.ID("q")), chromedp.KeyEvent("\t"))
	if id := str(`document.activeElement.id`); id != "run" {
		t.Errorf("Tab from the query goes to %q, not Run", id)
	}

	if path := os.Getenv("SPATE_UI_SCREENSHOT"); path != "" {
		// For the README: the first 20 rows, a facet open, the histogram.
		steps(t, ctx,
			chromedp.Navigate(page(url.Values{"q": {"*"}, "range": {"abs"}, "start": {start}, "end": {end}, "limit": {"20"}})),
			done,
			until(`document.getElementById("hitsbox").dataset.total !== undefined`),
			until(`document.getElementById("cancel").disabled`),
		)
		quality := 80 // JPEG
		if strings.HasSuffix(path, ".png") {
			quality = 100 // PNG
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(quality))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUIBrowserToken: with --auth-token-file the page itself loads without
// a token, a query without one is refused (and says so), and the token
// entered once is kept in the tab's session storage, not in the URL.
func TestUIBrowserToken(t *testing.T) {
	_, ts := newTestServer(t, Config{AuthTokens: []AuthToken{{Token: "s3cret-ui"}}})
	ctx := browser(t)
	line := fmt.Sprintf(`{"_time":%q,"_msg":"behind a token"}`, time.Now().UTC().Format(time.RFC3339Nano))
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/insert/jsonline", strings.NewReader(line+"\n"))
	req.Header.Set("Authorization", "Bearer s3cret-ui")
	if resp := do(t, req); resp.StatusCode != 200 {
		t.Fatalf("ingest: %d", resp.StatusCode)
	}
	done := until(`/rows|error|Error/.test(document.getElementById("status").textContent)`)
	steps(t, ctx, chromedp.Navigate(ts.URL+"/ui/?q=*&range=1h"), done)
	if s := eval[string](t, ctx, `document.getElementById("status").textContent`); s != "Error: missing or wrong bearer token" {
		t.Errorf("without a token the page says %q", s)
	}
	steps(t, ctx,
		chromedp.SetValue(chromedp.ID("token"), "s3cret-ui"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("token").dispatchEvent(new Event("change"))`),
		chromedp.Click(chromedp.ID("run")),
		until(`/1 rows/.test(document.getElementById("status").textContent)`),
	)
	if eval[string](t, ctx, `sessionStorage.getItem("spate.token")`) != "s3cret-ui" || strings.Contains(eval[string](t, ctx, `location.href`), "s3cret") {
		t.Error("the token is not kept in session storage only")
	}
}
