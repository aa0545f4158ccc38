package gen

import (
	"fmt"
	"math"
	"strings"
)

// The vocabulary of the generated logs. Everything here is built once at
// package init and read-only afterwards, so workers share it without locks.
// No table string needs JSON escaping (TestTablesNeedNoJSONEscaping); the
// only values that do are the messages, which are escaped per line.

var levelNames = [...]string{levelInfo: "info", levelWarn: "warn", levelError: "error", levelDebug: "debug"}

const (
	levelInfo = iota
	levelWarn
	levelError
	levelDebug
)

// levelPick: info ~80%, warn ~10%, error ~5%, debug ~5%.
var levelPick = newPickTable([]float64{levelInfo: 80, levelWarn: 10, levelError: 5, levelDebug: 5})

var services = [...]string{
	"api-gateway", "auth", "users", "orders", "payments", "checkout", "cart",
	"catalog", "search", "inventory", "shipping", "notifications", "billing",
	"reports", "recommendations", "reviews", "media", "webhooks", "scheduler",
	"admin",
}

// servicePick favours the front door and the busy services.
var servicePick = newPickTable(zipfWeights(len(services), 0.8))

// serviceRole is the host name prefix of each service's machines.
var serviceRole = [len(services)]string{
	"web", "auth", "app", "app", "pay", "web", "app", "app", "search", "app",
	"worker", "worker", "pay", "batch", "ml", "app", "media", "worker", "batch",
	"admin",
}

// serviceLatency is the median latency of each service in milliseconds.
var serviceLatency = [len(services)]float64{
	8, 15, 12, 30, 120, 60, 10, 14, 45, 20, 35, 25, 80, 400, 90, 18, 70, 50, 150, 22,
}

var regions = [...]string{"eu-west-1", "us-east-1", "us-west-2", "ap-southeast-1"}

// hostsPerService hosts serve each service, so there are 200 hosts in all,
// named like "web-017.eu-west-1".
const hostsPerService = 10

type host struct {
	name   string
	region string
}

var hosts = func() []host {
	count := map[string]int{}
	hs := make([]host, 0, len(services)*hostsPerService)
	for s := range services {
		role := serviceRole[s]
		for k := range hostsPerService {
			count[role]++
			region := regions[(s+k/4)%len(regions)]
			hs = append(hs, host{name: fmt.Sprintf("%s-%03d.%s", role, count[role], region), region: region})
		}
	}
	return hs
}()

var methods = [...]string{"GET", "POST", "PUT", "DELETE", "PATCH"}

const methodPOST = 1 // index of "POST" in methods

var methodPick = newPickTable([]float64{72, 14, 6, 4, 4})

var protos = [...]string{"HTTP/1.1", "HTTP/2.0", "HTTP/1.0"}
var protoPick = newPickTable([]float64{58, 38, 4})

var userAgents = [...]string{
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
	"Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0",
	"curl/8.5.0",
	"Go-http-client/2.0",
	"python-requests/2.32.3",
	"okhttp/4.12.0",
	"PostmanRuntime/7.39.0",
	"kube-probe/1.30",
	"Prometheus/2.53.0",
	"Googlebot/2.1 (+http://www.google.com/bot.html)",
	"axios/1.7.2",
	"Java/17.0.11",
}
var uaPick = newPickTable([]float64{12, 5, 6, 5, 5, 3, 10, 10, 8, 9, 3, 7, 5, 3, 6, 3})

// tagSets are the values of the occasional "tags" extra field.
var tagSets = [...][]string{
	{"canary"}, {"beta", "canary"}, {"internal"}, {"batch", "low-priority"},
	{"mobile", "ios"}, {"mobile", "android"}, {"experiment", "ab-42"},
}

// tagSetLogfmt holds each tag set joined with commas, the logfmt spelling.
var tagSetLogfmt = func() []string {
	s := make([]string, len(tagSets))
	for i, t := range tagSets {
		s[i] = strings.Join(t, ",")
	}
	return s
}()

// zipfWeights returns n weights proportional to 1/(k+1)^s.
func zipfWeights(n int, s float64) []float64 {
	w := make([]float64, n)
	for k := range w {
		w[k] = 1 / math.Pow(float64(k+1), s)
	}
	return w
}

// Paths and messages are templates: literal text with typed slots, parsed
// once at init into parts so the hot loop only appends.

type slot uint8

const (
	slotNone      slot = iota
	slotID             // 1..999999
	slotHex            // 8 hex digits
	slotN              // 1..99
	slotMs             // 1..9999
	slotCents          // 00..99
	slotUser           // u_12345
	slotRes            // a resource name such as "orders"
	slotSvc            // a service name
	slotReason         // an error reason such as "connection refused"
	slotWord           // a search-like word
	slotField          // a field name
	slotUni            // a non-ASCII word such as "café" or "日本語"
	slotLocale         // a locale such as "de-DE"
	slotCity           // a city name (ASCII)
	slotBrowser        // a browser name
	slotJob            // a background job name
	slotHitMiss        // "hit" or "miss"
	slotBool           // "true" or "false"
	slotStatus5xx      // 500, 502, 503 or 504
	slotRegion         // a region name
	slotTenant         // a tenant name
)

var slotNames = map[string]slot{
	"id": slotID, "hex": slotHex, "n": slotN, "ms": slotMs, "cents": slotCents,
	"user": slotUser, "res": slotRes, "svc": slotSvc, "reason": slotReason,
	"word": slotWord, "field": slotField, "uni": slotUni, "locale": slotLocale,
	"city": slotCity, "browser": slotBrowser, "job": slotJob,
	"hitmiss": slotHitMiss, "bool": slotBool, "5xx": slotStatus5xx,
	"region": slotRegion, "tenant": slotTenant,
}

// slotWords lists the words a word slot draws from, uniformly.
var slotWords = [...][]string{
	slotRes: {
		"users", "orders", "products", "carts", "payments", "invoices",
		"sessions", "inventory", "shipments", "reviews", "notifications",
		"accounts", "reports", "webhooks", "coupons", "subscriptions",
		"addresses", "wishlists", "returns", "categories",
	},
	slotSvc: services[:],
	slotReason: {
		"connection refused", "context deadline exceeded", "i/o timeout",
		"no such host", "too many open files", "connection reset by peer",
		"broken pipe", "TLS handshake timeout", "unexpected EOF",
		"permission denied", "invalid argument", "lock wait timeout exceeded",
		"circuit breaker open", "out of memory", "disk quota exceeded",
	},
	slotWord: {
		"shoes", "laptop", "coffee", "headphones", "backpack", "jacket",
		"keyboard", "monitor", "garden", "bicycle", "camera", "tent", "lamp",
		"desk", "chair", "watch", "phone", "charger", "blender", "kettle",
		"sofa", "pillow", "scarf", "boots", "printer", "router", "tablet",
		"speaker", "mug", "notebook",
	},
	slotField: {
		"email", "phone", "zip_code", "country", "currency", "quantity",
		"sku", "birth_date", "password", "display_name", "vat_id", "iban",
	},
	slotUni: {
		"café", "naïve", "日本語", "Привет", "Zürich", "São Paulo", "東京",
		"Ελληνικά", "crème brûlée", "Ångström", "façade", "piñata", "😀",
		"🚀", "✅", "München", "Kraków", "İstanbul", "Dvořák", "한국어",
	},
	slotLocale:  {"de-DE", "fr-FR", "ja-JP", "ru-RU", "pt-BR", "es-ES", "ko-KR", "el-GR", "pl-PL", "tr-TR"},
	slotCity:    {"Berlin", "Paris", "Lisbon", "Dublin", "Austin", "Seattle", "Toronto", "Sydney", "Singapore", "Warsaw", "Oslo", "Madrid"},
	slotBrowser: {"Chrome", "Firefox", "Safari", "Edge", "Opera", "the iOS app", "the Android app"},
	slotJob: {
		"invoice-export", "search-reindex", "cart-cleanup", "email-digest",
		"thumbnail-render", "fraud-scan", "stock-sync", "report-rollup",
	},
	slotHitMiss:   {"hit", "miss"},
	slotBool:      {"true", "false"},
	slotStatus5xx: {"500", "502", "503", "504"},
	slotRegion:    regions[:],
	slotTenant:    {"acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka"},
}

type part struct {
	lit  string
	slot slot // slotNone for a literal part
}

type template []part

// parseTemplate splits "served {res} {id}" into literal and slot parts. It
// panics on an unknown slot name: the templates are constants in this file.
func parseTemplate(s string) template {
	var t template
	for s != "" {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			t = append(t, part{lit: s})
			break
		}
		if i > 0 {
			t = append(t, part{lit: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			panic(fmt.Sprintf("BUG: unclosed slot in template %q", s))
		}
		sl, ok := slotNames[s[i+1:i+j]]
		if !ok {
			panic(fmt.Sprintf("BUG: unknown slot %q in template %q", s[i+1:i+j], s))
		}
		t = append(t, part{slot: sl})
		s = s[i+j+1:]
	}
	return t
}

func parseTemplates(ss ...string) []template {
	ts := make([]template, len(ss))
	for i, s := range ss {
		ts[i] = parseTemplate(s)
	}
	return ts
}

// Message templates by level. A line's message comes from msgQuoted (~2%),
// msgUnicode (~2%) or its level's list; msgSuffixes add length and variety.
var msgByLevel = [...][]template{
	levelInfo: parseTemplates(
		"request completed",
		"served {res} {id} from cache in {ms}ms",
		"user {user} updated {res} settings",
		"fetched {n} {res} from upstream {svc}",
		"listing {res}, page {n}",
		"created {res} {id} for account {id}",
		"token refreshed for user {user}",
		"session started from {city} using {browser}",
		"payment authorized for order {id} amount {n}.{cents} EUR",
		"cache {hitmiss} for key {res}:{id}",
		"background job {job} finished in {ms}ms",
		"scheduled {n} {res} for reindex",
		"health check passed",
		"webhook delivered to tenant {tenant} with status 200",
		"search for {word} returned {n} results",
		"user {user} signed in from {city}",
		"exported {n} {res} to object storage",
		"feature flag {field} evaluated to {bool}",
		"order {id} shipped to {city}",
		"connection pool resized to {n} connections",
	),
	levelWarn: parseTemplates(
		"slow query on {res} took {ms}ms",
		"retrying request to {svc} after {reason}, attempt {n} of 5",
		"rate limit approaching for client {id}: {n} requests in the last minute",
		"deprecated endpoint called from {browser}",
		"cache miss storm on {res}, falling back to the database",
		"response for {res} {id} took {ms}ms, above the 500ms budget",
		"queue depth for {job} is {id}, consumers are falling behind",
		"certificate for tenant {tenant} expires in {n} days",
	),
	levelError: parseTemplates(
		"upstream {svc} returned {5xx}: {reason}",
		"failed to process {res} {id}: {reason}",
		"database connection lost after {ms}ms: {reason}",
		"panic recovered in handler for {res}: {reason}",
		"timeout waiting for {svc} after {ms}ms",
		"payment {id} declined by provider: {reason}",
		"could not publish event for {res} {id} to the queue: {reason}",
	),
	levelDebug: parseTemplates(
		"cache lookup key={res}:{id} hit={bool}",
		"parsed {n} headers in {ms}us",
		"sql: SELECT id, status FROM {res} WHERE id = {id} LIMIT {n}",
		"resolved {svc} to {n} endpoints in {region}",
		"span {hex} finished with {n} children",
	),
}

var msgQuoted = parseTemplates(
	`invalid value "{word}" for field "{field}"`,
	`unexpected token "{hex}" at line {n}, column {n}`,
	`config key "{field}" is deprecated, use "{field}_v2" instead`,
	`user {user} searched for "{word} {word}"`,
	`cannot open "C:\Users\{tenant}\{word}.csv": {reason}`,
)

var msgUnicode = parseTemplates(
	"rendered greeting {uni} for locale {locale}",
	"search for {uni} returned {n} results",
	"customer name {uni} normalized for locale {locale}",
	"notification sent: {uni} your {word} is ready",
	"tenant {tenant} renamed a workspace to {uni} {word}",
)

var msgSuffixes = parseTemplates(
	"",
	"",
	"",
	"",
	"",
	" after {n} retries",
	" for tenant {tenant}",
	" in region {region}",
	" ({n} queries)",
	"; upstream took {ms}ms",
)

// pathTemplates are the request paths, most popular first; pathPick draws
// them with Zipf-like popularity. Templates with {id}, {hex} or {word} make
// thousands of distinct paths.
var pathTemplates = func() []template {
	var ss []string
	statics := []string{
		"/", "/healthz", "/api/v1/auth/token", "/metrics", "/login",
		"/search?q={word}&page={n}", "/static/js/app.{hex}.js", "/graphql",
		"/static/css/main.{hex}.css", "/api/v1/auth/refresh", "/logout",
		"/readyz", "/favicon.ico", "/signup", "/robots.txt", "/ws",
	}
	forms := []string{
		"/api/v1/%s/{id}", "/api/v1/%s", "/api/v2/%s/{id}/events",
		"/api/v2/%s", "/internal/%s/sync",
	}
	res := slotWords[slotRes]
	// Interleave so that popularity is spread over resources and forms.
	for i := range len(forms) * len(res) {
		f, r := i/len(res), (i*7)%len(res)
		if i%6 == 0 && len(statics) > 0 {
			ss = append(ss, statics[0])
			statics = statics[1:]
		}
		ss = append(ss, fmt.Sprintf(forms[f], res[r]))
	}
	ss = append(ss, statics...)
	return parseTemplates(ss...)
}()

var pathPick = newPickTable(zipfWeights(len(pathTemplates), 1.0))
