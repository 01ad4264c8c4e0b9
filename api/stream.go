package api

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// arrayStream writes a JSON answer with one long array as its elements are
// read (the registry document, a page of the receipt chain): the head (the
// fields before the array and its '['), each element as marshal writes it,
// separated by commas, then the tail (']' and the fields after it) and a
// newline. The bytes are those writeJSON writes for the whole answer built in
// memory; what is held is one element and a buffer. The response is gzipped
// when the request accepts it (gzip, when set).
//
// Nothing is sent before the first add or end, so an error before then is
// answered with writeError; after it, fail aborts the response, and the
// client sees a cut-off body, never a short document that parses.
type arrayStream struct {
	w    http.ResponseWriter
	gzip bool
	head string

	out     *bufio.Writer
	gz      *gzip.Writer
	enc     *json.Encoder
	elem    bytes.Buffer
	n       int // elements written
	started bool
}

func newArrayStream(w http.ResponseWriter, r *http.Request, gzipped bool, head string) *arrayStream {
	return &arrayStream{w: w, head: head, gzip: gzipped && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip")}
}

func (s *arrayStream) start() error {
	if s.started {
		return nil
	}
	s.started = true
	s.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	var to io.Writer = s.w
	if s.gzip {
		s.w.Header().Set("Content-Encoding", "gzip")
		s.gz = gzip.NewWriter(s.w)
		to = s.gz
	}
	s.w.WriteHeader(http.StatusOK)
	s.out = bufio.NewWriterSize(to, 32<<10)
	s.enc = json.NewEncoder(&s.elem)
	s.enc.SetEscapeHTML(false)
	_, err := s.out.WriteString(s.head)
	return err
}

// add writes one element.
func (s *arrayStream) add(v any) error {
	if err := s.start(); err != nil {
		return err
	}
	s.elem.Reset()
	if err := s.enc.Encode(v); err != nil {
		return err
	}
	if s.n > 0 {
		s.out.WriteByte(',')
	}
	s.n++
	_, err := s.out.Write(bytes.TrimSuffix(s.elem.Bytes(), []byte("\n")))
	return err
}

// end writes the tail and finishes the response.
func (s *arrayStream) end(tail string) error {
	if err := s.start(); err != nil {
		return err
	}
	s.out.WriteString(tail)
	s.out.WriteByte('\n')
	if err := s.out.Flush(); err != nil {
		return err
	}
	if s.gz != nil {
		return s.gz.Close()
	}
	return nil
}

// fail answers err while nothing is sent, and aborts the response after.
func (s *arrayStream) fail(r *http.Request, err error) {
	if !s.started {
		writeError(s.w, r, err)
		return
	}
	slog.Error("streamed answer cut off", "path", r.URL.Path, "err", err)
	panic(http.ErrAbortHandler)
}
