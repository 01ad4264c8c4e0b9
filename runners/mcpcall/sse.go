package mcpcall

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"strconv"
	"sync"
	"time"
)

// Reading server-sent events as the WHATWG event stream interpretation
// says (what MCP's streamable HTTP answers are): lines end in CRLF, LF or
// CR; a leading byte order mark is dropped; a line starting with ':' is a
// comment; a line without ':' is a field with an empty value; one space
// after the ':' is dropped; data lines join with LF; an id sets the last
// event id (one with a NUL does not), a retry of digits the reconnection
// delay; a blank line ends an event, and an event with no data line is not
// dispatched (a resumable server's priming event, an id and empty data, is
// dispatched with empty data, which carries no message); an event the
// stream ends in the middle of is dropped. The fast path reads its answers
// with it, tools/list answers are read for their schemas with it, and every
// other event stream of a session is written again in the plain form the
// SDK's reader takes (canonicalSSE), which refuses a line without ':' as a
// malformed stream and does not end lines at a lone CR.

// sseEvent is one block of fields ended by a blank line.
type sseEvent struct {
	dispatch bool   // a data line came: the event is dispatched
	name     string // the event type, "" for message
	data     []byte // valid until the next call of next
	id       string // the block's id field, when idSet
	idSet    bool
	retry    time.Duration // the block's retry field, when retrySet
	retrySet bool
}

// sseReader reads events from a stream.
type sseReader struct {
	sc      *bufio.Scanner
	buf     *[]byte // the scanner's first buffer, from sseBuffers
	started bool    // the byte order mark was looked for
	skipLF  bool    // the last line ended in a CR: an LF first is its CRLF
	data    []byte
	// lastID and retry are the stream's last event id and reconnection
	// delay so far.
	lastID string
	retry  time.Duration
}

// sseBuffers keeps the 4 KB buffers of event streams between calls.
var sseBuffers = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

func newSSEReader(r io.Reader) *sseReader {
	s := &sseReader{sc: bufio.NewScanner(r), buf: sseBuffers.Get().(*[]byte)}
	s.sc.Buffer(*s.buf, math.MaxInt32) // the body's cap bounds a line
	s.sc.Split(s.split)
	return s
}

// release gives back the reader's buffer; s is not used after.
func (s *sseReader) release() {
	if s.buf != nil {
		sseBuffers.Put(s.buf)
		s.buf = nil
	}
}

var bom = []byte("\xEF\xBB\xBF")

// split cuts lines at CRLF, LF or CR; a line the stream ends without an
// end is not a line.
func (s *sseReader) split(data []byte, atEOF bool) (int, []byte, error) {
	skip := 0
	if !s.started {
		if len(data) < len(bom) && bytes.HasPrefix(bom, data) && !atEOF {
			return 0, nil, nil
		}
		s.started = true
		if bytes.HasPrefix(data, bom) {
			skip = len(bom)
		}
	}
	if s.skipLF && len(data) > skip {
		s.skipLF = false
		if data[skip] == '\n' {
			skip++
		}
	}
	rest := data[skip:]
	end := bytes.IndexByte(rest, '\n')
	head := rest
	if end >= 0 {
		head = rest[:end]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		if cr+1 < len(rest) {
			if rest[cr+1] == '\n' {
				return skip + cr + 2, rest[:cr], nil
			}
			return skip + cr + 1, rest[:cr], nil
		}
		s.skipLF = true // the next byte may be this CR's LF
		return skip + cr + 1, rest[:cr], nil
	}
	if end >= 0 {
		return skip + end + 1, rest[:end], nil
	}
	if atEOF {
		return len(data), nil, nil
	}
	return skip, nil, nil
}

// next returns the next block of fields, ended by a blank line; io.EOF
// when the stream ended (an unfinished block dropped), or the read's
// error.
func (s *sseReader) next() (ev sseEvent, err error) {
	s.data = s.data[:0]
	fields := false
	for s.sc.Scan() {
		line := s.sc.Bytes()
		if len(line) == 0 {
			if !fields {
				continue
			}
			if ev.dispatch {
				ev.data = s.data[:len(s.data)-1] // without the last data line's LF
			}
			return ev, nil
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			s.data = append(append(s.data, value...), '\n')
			ev.dispatch = true
		case "event":
			ev.name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id, ev.idSet = string(value), true
				s.lastID = ev.id
			}
		case "retry":
			if n, perr := strconv.ParseUint(string(value), 10, 63); perr == nil && len(value) > 0 && value[0] != '+' {
				ev.retry, ev.retrySet = time.Duration(n)*time.Millisecond, true
				s.retry = ev.retry
			}
		default:
			continue
		}
		fields = true
	}
	if err := s.sc.Err(); err != nil {
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// canonicalSSE is an event stream written again as each block's fields in
// the plain form: "field: value" lines ended by LF, an event's data one
// data line for each of its lines, the block ended by a blank line.
// Comments and blocks without a field are left out. ended, when set, is
// told each block's end (the per-event cap of a session's own stream).
type canonicalSSE struct {
	r     *sseReader
	body  io.Closer
	ended func()
	out   []byte
	err   error
}

func newCanonicalSSE(body io.ReadCloser, ended func()) *canonicalSSE {
	return &canonicalSSE{r: newSSEReader(body), body: body, ended: ended}
}

func (c *canonicalSSE) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		ev, err := c.r.next()
		if err != nil {
			c.err = err
			continue
		}
		c.out = appendEvent(c.out[:0], ev)
		if c.ended != nil {
			c.ended()
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

func (c *canonicalSSE) Close() error {
	c.r.release()
	return c.body.Close()
}

// appendEvent writes ev in the plain form.
func appendEvent(b []byte, ev sseEvent) []byte {
	if ev.name != "" {
		b = append(append(append(b, "event: "...), ev.name...), '\n')
	}
	if ev.idSet {
		b = append(append(append(b, "id: "...), ev.id...), '\n')
	}
	if ev.retrySet {
		b = append(strconv.AppendInt(append(b, "retry: "...), ev.retry.Milliseconds(), 10), '\n')
	}
	if ev.dispatch {
		for line := range bytes.SplitSeq(ev.data, []byte("\n")) {
			b = append(append(append(b, "data: "...), line...), '\n')
		}
	}
	return append(b, '\n')
}
