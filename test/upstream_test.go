package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// upstream is a real HTTP server on loopback standing in for a third-party API.
// It records every request it receives.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

func (u *upstream) requests() []seenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seenRequest(nil), u.seen...)
}

// newUpstream serves handler and records requests.
func newUpstream(t testing.TB, handler http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.seen = append(u.seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(body)})
		u.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// openMeteo answers /v1/forecast like the real Open-Meteo API.
func openMeteo(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	lat, err1 := strconv.ParseFloat(q.Get("latitude"), 64)
	lon, err2 := strconv.ParseFloat(q.Get("longitude"), 64)
	if r.URL.Path != "/v1/forecast" || err1 != nil || err2 != nil {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":true,"reason":"Parameter 'latitude' and 'longitude' must be numbers"}`)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"latitude": lat, "longitude": lon, "generationtime_ms": 0.02, "utc_offset_seconds": 0, "timezone": "GMT",
		"current_units": map[string]string{"time": "iso8601", "interval": "seconds", "temperature_2m": "°C"},
		"current":       map[string]any{"time": "2026-07-26T04:30", "interval": 900, "temperature_2m": 15.7},
	})
}
