package benchwrite

import (
	"fmt"
	"strconv"
)

// Records are n NDJSON records of the same size laid back to back in one
// buffer, so that the timed loop only slices. Record i is
//
//	{"seq":i,"msg":"<filler>"}\n
//
// padded with letters to exactly Size bytes. Every record differs (seq), so
// a dropped, duplicated or reordered record changes the file.
type Records struct {
	Data []byte // all records; len(Data) == Len()*Size
	Size int    // bytes per record, the trailing '\n' included
}

// recordFrame is the fixed part of a record: everything but seq's digits
// and the filler.
const recordFrame = len(`{"seq":,"msg":""}` + "\n")

// MinRecordSize is the smallest record size that can hold n records: the
// frame, the digits of the largest seq and one letter of filler.
func MinRecordSize(n int64) int {
	return recordFrame + len(strconv.FormatInt(max(n-1, 0), 10)) + 1
}

// MakeRecords returns n records of size bytes each. It allocates n*size
// bytes and takes about a millisecond per MiB; callers do it before timing.
func MakeRecords(n int64, size int) (Records, error) {
	if n <= 0 {
		return Records{}, fmt.Errorf("cannot make %d records: want at least 1", n)
	}
	if lo := MinRecordSize(n); size < lo {
		return Records{}, fmt.Errorf("cannot make records of %d bytes: %d records need at least %d bytes each", size, n, lo)
	}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	// pad holds the filler for every record: record i starts at i%len(letters).
	pad := make([]byte, size+len(letters))
	for i := range pad {
		pad[i] = letters[i%len(letters)]
	}
	data := make([]byte, 0, n*int64(size))
	for i := range n {
		start := len(data)
		data = append(data, `{"seq":`...)
		data = strconv.AppendInt(data, i, 10)
		data = append(data, `,"msg":"`...)
		fill := size - (len(data) - start) - len(`"}`+"\n")
		off := int(i % int64(len(letters)))
		data = append(data, pad[off:off+fill]...)
		data = append(data, `"}`+"\n"...)
	}
	return Records{Data: data, Size: size}, nil
}

// Len is the number of records.
func (r Records) Len() int {
	if r.Size == 0 {
		return 0
	}
	return len(r.Data) / r.Size
}

// At returns record i; it aliases Data.
func (r Records) At(i int) []byte {
	return r.Data[i*r.Size : (i+1)*r.Size : (i+1)*r.Size]
}
