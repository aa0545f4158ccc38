// Command httpmem answers every request with the same 4 KiB from memory,
// through a bare net/http handler: the ceiling a Go file server's small
// answers can reach, measured by scripts/peers/files.sh beside spate and
// nginx.
//
//	go run ./scripts/peers/httpmem -listen 127.0.0.1:19463 -file small.bin
package main

import (
	"flag"
	"log"
	"net/http"
	"os"
	"strconv"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:19463", "address")
	file := flag.String("file", "", "the file whose bytes every answer is")
	flag.Parse()
	body, err := os.ReadFile(*file)
	if err != nil {
		log.Fatal(err)
	}
	size := strconv.Itoa(len(body))
	log.Fatal(http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", size)
		w.Write(body)
	})))
}
