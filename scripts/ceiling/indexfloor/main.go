// Command indexfloor measures the least CPU a word index of an NDJSON file
// can cost: the floor under issue 17's "index building at most 20% of the
// CPU that ingest uses".
//
// It reads FILE (mapped) in 1 MiB blocks of whole lines and, per block, sets
// one bit per word in a 64 KiB bitmap: a word is a run of ASCII letters,
// digits and '_' or of bytes >= 0x80, hashed with a multiply-xorshift hash
// of its 8-byte words. That is less than any bloom index of the words
// needs: it parses no JSON, keeps no field apart from another, builds no
// column, checks no UTF-8 and writes nothing. It prints the CPU seconds of
// the pass (user+system, page faults of the mapping included) and its rate.
//
// usage: go run ./scripts/ceiling/indexfloor FILE
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
	"time"
)

const blockSize = 1 << 20

// isWord marks the bytes that make up words.
var isWord = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
	}
	return t
}()

func hashWord(w []byte) uint64 {
	h := uint64(len(w)) * 0x9e3779b97f4a7c15
	for len(w) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(w)) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
		w = w[8:]
	}
	var tail uint64
	for i, c := range w {
		tail |= uint64(c) << (8 * i)
	}
	h = (h ^ tail) * 0x94d049bb133111eb
	return h ^ h>>29
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: indexfloor FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "indexfloor:", err)
		os.Exit(1)
	}
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		fmt.Fprintln(os.Stderr, "indexfloor: empty or unreadable file", err)
		os.Exit(1)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		fmt.Fprintln(os.Stderr, "indexfloor: mmap:", err)
		os.Exit(1)
	}
	c0, t0 := cpu(), time.Now()
	var bitmap [8192]uint64 // 64 KiB: stays in L2
	words, set := 0, 0
	for off := 0; off < len(data); {
		end := min(off+blockSize, len(data))
		// Whole lines: extend to the next newline.
		for end < len(data) && data[end-1] != '\n' {
			end++
		}
		clear(bitmap[:])
		b := data[off:end]
		for i := 0; i < len(b); {
			if !isWord[b[i]] {
				i++
				continue
			}
			j := i + 1
			for j < len(b) && isWord[b[j]] {
				j++
			}
			h := hashWord(b[i:j])
			bitmap[h>>51&8191] |= 1 << (h & 63)
			words++
			i = j
		}
		for _, w := range bitmap {
			if w != 0 {
				set++
			}
		}
		off = end
	}
	c1, t1 := cpu(), time.Now()
	secs := (c1 - c0).Seconds()
	fmt.Printf("indexfloor: %d bytes, %d words, %.3f CPU s (%.3f s wall), %.2f GB/s per core (%d bitmap words set)\n",
		len(data), words, secs, t1.Sub(t0).Seconds(), float64(len(data))/secs/1e9, set)
}
