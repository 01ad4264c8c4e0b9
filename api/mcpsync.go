package api

import (
	"sort"
	"sync"
	"time"
)

// MCPSyncStatus is how the last sync of one MCP server went on this host:
// when it ran, when it last listed the server's tools, and why the last one
// failed ("" when it did not). GET /api/directory/KEY shows it on the
// owner's view of each row that calls the server (mcp_sync), and the
// host's metrics count it (rowcall_mcp_sync_failures_total).
type MCPSyncStatus struct {
	Server   string `json:"server"`
	At       string `json:"at"`                // the last sync, RFC 3339
	LastOK   string `json:"last_ok,omitempty"` // the last one that listed the tools
	Error    string `json:"error,omitempty"`   // why the last one failed
	Failures int64  `json:"failures"`          // failed syncs since the host started
}

// mcpSyncs keeps each server's MCPSyncStatus.
type mcpSyncs struct {
	mu sync.Mutex
	m  map[string]*MCPSyncStatus
}

// record notes a sync of server at now: failed with err, or not.
func (s *mcpSyncs) record(server string, now time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*MCPSyncStatus{}
	}
	st := s.m[server]
	if st == nil {
		st = &MCPSyncStatus{Server: server}
		s.m[server] = st
	}
	st.At, st.Error = now.UTC().Format(time.RFC3339), ""
	if err != nil {
		st.Error = err.Error()
		st.Failures++
		return
	}
	st.LastOK = st.At
}

// get is server's status (nil before its first sync).
func (s *mcpSyncs) get(server string) *MCPSyncStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.m[server]; st != nil {
		c := *st
		return &c
	}
	return nil
}

// MCPSyncStatuses is every synced server's status, by server.
func (h *Handler) MCPSyncStatuses() []MCPSyncStatus {
	h.syncs.mu.Lock()
	defer h.syncs.mu.Unlock()
	out := make([]MCPSyncStatus, 0, len(h.syncs.m))
	for _, st := range h.syncs.m {
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}
