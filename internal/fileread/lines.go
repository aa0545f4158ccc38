package fileread

import "bytes"

// NextLine splits the first line off data. line excludes the "\n" and a
// "\r" before it; rest starts after the "\n". For data without a "\n" the
// whole of data is the line. Both alias data.
func NextLine(data []byte) (line, rest []byte) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		line, rest = data, nil
	} else {
		line, rest = data[:i], data[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// CountLines returns the number of lines in a chunk: its '\n' bytes, plus
// one for a final line without '\n'. It touches every byte.
func CountLines(data []byte) int {
	n := bytes.Count(data, newline)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

var newline = []byte{'\n'}
