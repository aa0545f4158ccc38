package ndjson_test

import (
	"fmt"

	"github.com/spate-io/spate/internal/ndjson"
)

func ExampleIter() {
	lines := []string{
		`{"level":"warn","http":{"status":503,"ua":"curl/8.5"},"tags":[ "a", "b" ],"msg":"upstream \"api\" down"}`,
		`{"level":"info","msg":"truncated`,
		`plain text line`,
	}
	var it ndjson.Iter // one per worker, reused for every line
	for _, line := range lines {
		it.Reset([]byte(line))
		for it.Next() {
			fmt.Printf("%s (%s) = %s\n", it.Key(), it.Kind(), it.Value())
		}
		if err := it.Err(); err != nil {
			fmt.Println("bad line:", err)
		}
	}
	// Output:
	// level (string) = warn
	// http.status (number) = 503
	// http.ua (string) = curl/8.5
	// tags (array) = ["a","b"]
	// msg (string) = upstream "api" down
	// level (string) = info
	// bad line: unexpected end of line at byte 32
	// bad line: invalid character 'p' looking for beginning of object at byte 0
}
