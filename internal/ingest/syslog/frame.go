package syslog

import (
	"bytes"
	"fmt"
)

// frameKind is what nextFrame found.
type frameKind uint8

const (
	needMore frameKind = iota // no whole frame yet (or nothing left at EOF)
	gotMsg                    // a message
	skipLine                  // a '\n'-ended line over the limit, skipped whole
	skipRest                  // a line over the limit whose '\n' has not come: skip up to it
	badFrame                  // a broken octet-counted frame: stop reading
)

// maxCountDigits is the most digits an octet count may have.
const maxCountDigits = 10

// nextFrame finds the first frame in b, the unread input; eof says no more
// will come after it. It returns what it found, the message (a slice of b,
// for gotMsg), how many bytes of b are done with (always, also for
// needMore: the empty lines before a frame) and, for badFrame, why.
//
// As in VictoriaLogs, a frame starting with a digit is octet counted:
// digits, one space, then that many bytes (at most max); else it ends at
// '\n' (its '\r' before it dropped), or at EOF. Empty lines ("\n",
// "\r\n") between frames are skipped.
func nextFrame(b []byte, eof bool, max int) (kind frameKind, msg []byte, adv int, err error) {
	for adv < len(b) && (b[adv] == '\n' || b[adv] == '\r') {
		adv++
	}
	b = b[adv:]
	if len(b) == 0 {
		return needMore, nil, adv, nil
	}
	if c := b[0]; c >= '0' && c <= '9' {
		n, j := 0, 0
		for ; j < len(b) && j <= maxCountDigits && b[j] >= '0' && b[j] <= '9'; j++ {
			n = n*10 + int(b[j]-'0')
		}
		switch {
		case j > maxCountDigits:
			return badFrame, nil, adv, fmt.Errorf("octet count %q... too long", b[:j])
		case j == len(b):
			if eof {
				return badFrame, nil, adv, fmt.Errorf("stream ends in octet count %q", b)
			}
			return needMore, nil, adv, nil
		case b[j] != ' ':
			return badFrame, nil, adv, fmt.Errorf("bad octet count %q: not digits then a space", quoteStart(b[:j+1]))
		case n > max:
			return badFrame, nil, adv, fmt.Errorf("octet count %d over the %d-byte limit", n, max)
		}
		end := j + 1 + n
		if end > len(b) {
			if eof {
				return badFrame, nil, adv, fmt.Errorf("stream ends %d bytes into a %d-byte message", len(b)-j-1, n)
			}
			return needMore, nil, adv, nil
		}
		return gotMsg, b[j+1 : end], adv + end, nil
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		switch {
		case len(b) > max:
			if eof {
				return skipLine, nil, adv + len(b), nil
			}
			return skipRest, nil, adv + len(b), nil
		case eof:
			return gotMsg, trimCR(b), adv + len(b), nil
		}
		return needMore, nil, adv, nil
	}
	if i > max {
		return skipLine, nil, adv + i + 1, nil
	}
	return gotMsg, trimCR(b[:i]), adv + i + 1, nil
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// quoteStart returns at most the first 32 bytes of b, for messages.
func quoteStart(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}
