package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/contract"
)

// What the directory offers beside tools:
//
//   - tool annotations: readOnlyHint on a row that only reads (an http row
//     whose method is GET or HEAD; an fn row, which runs with no network and
//     no filesystem), openWorldHint on the rows that reach the world (http,
//     agent, flow), destructiveHint on a row that changes things: true when
//     the row is sensitive, false otherwise; title, the row's description.
//   - every row the caller's scope covers has its contract document (the one
//     GET /api/dispatch?key=K serves, Markdown) as a resource,
//     rowcall://contract/KEY: resources/list pages through the enabled ones
//     in canonical order, resources/read reads any the scope covers, and
//     resources/templates/list names rowcall://contract/{key}.
//   - resources/subscribe of a contract (on a host, where a stream carries
//     the notice): notifications/resources/updated when its document
//     changes, seen by the poller that sends list_changed.
//   - completion/complete of the template's key: the keys the caller's scope
//     covers that start with what was typed; of a row's call template's
//     arguments, complete.go.
//   - an fn row's result that is an image or audio — a data: URL of such a
//     type (data:image/png;base64,…), or raw bytes that sniff as one — is
//     image or audio content, not text.
//   - notifications/progress for a tools/call that sent a progressToken: a
//     flow's steps, an agent's rounds (rowcall.Progress, withProgress).

// contractPrefix is what a contract resource's URI starts with; the key follows.
const contractPrefix = "rowcall://contract/"

// contractTemplate is the resource template every contract resource matches.
var contractTemplate = &sdk.ResourceTemplate{
	Name:        "contract",
	Title:       "A capability's contract document",
	URITemplate: contractPrefix + "{key}",
	Description: "How to call one capability: what it does, its arguments, an example, its risk and the contract hash a receipt carries.",
	MIMEType:    "text/markdown",
}

// resourcePage is how many resources one resources/list answer carries when
// the session has no page size.
const resourcePage = 100

// maxCompletions is the most values completion/complete returns (the
// specification's limit).
const maxCompletions = 100

// annotate sets a row tool's title and hints.
func annotate(row *rowcall.Row, t *sdk.Tool) {
	t.Title = clip(strings.TrimSuffix(sentence(row.Description()), "."), 120)
	a := &sdk.ToolAnnotations{Title: t.Title}
	switch row.Type {
	case rowcall.TypeFn:
		a.ReadOnlyHint, a.OpenWorldHint = true, ptr(false)
	case rowcall.TypeHTTP:
		method, _, _ := strings.Cut(strings.TrimSpace(row.Target), " ")
		m := strings.ToUpper(method)
		a.ReadOnlyHint, a.OpenWorldHint = m == "GET" || m == "HEAD", ptr(true)
	default:
		a.OpenWorldHint = ptr(true)
	}
	if !a.ReadOnlyHint {
		a.DestructiveHint = ptr(row.Sensitive != 0)
	}
	t.Annotations = a
}

// addResources registers the contract template and answers resources/list
// from the directory (the SDK would list only resources added one by one).
func (st *session) addResources(s *sdk.Server, pageSize int) {
	s.AddResourceTemplate(contractTemplate, st.readContract)
	if pageSize <= 0 {
		pageSize = resourcePage
	}
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch p := req.GetParams().(type) {
			case *sdk.ListResourcesParams:
				if method == "resources/list" {
					return st.listContracts(ctx, orZero(p).Cursor, pageSize)
				}
			case *sdk.ListResourceTemplatesParams:
				if method == "resources/templates/list" {
					return st.listTemplates(orZero(p).Cursor, pageSize)
				}
			case *sdk.ReadResourceParams:
				if method == "resources/read" && p != nil && strings.HasPrefix(p.URI, callPrefix) {
					return st.readCall(ctx, p.URI)
				}
			}
			return next(ctx, method, req)
		}
	})
}

// orZero is p, or a zero value when p is nil (a request without params).
func orZero[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// listContracts is one page of contract resources: the enabled rows the
// caller's scope covers, in canonical order; the cursor is the offset.
func (st *session) listContracts(ctx context.Context, cursor string, size int) (*sdk.ListResourcesResult, error) {
	offset, err := offsetOf(cursor)
	if err != nil {
		return nil, err
	}
	c, _ := st.current()
	enabled := int64(1)
	page, err := st.h.cfg.Store.List(ctx, rowcall.Filter{Enabled: &enabled, Scope: rowcall.ScopeOf(c.Token), Limit: min(size+1, rowcall.MaxPage), Offset: offset, Bare: true})
	if err != nil {
		return nil, err
	}
	res := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}}
	res.TTLMs, res.CacheScope = int(ListTTL.Milliseconds()), "private"
	rows := page.Rows
	if len(rows) > size {
		rows = rows[:size]
		res.NextCursor = strconv.Itoa(offset + size)
	}
	for i := range rows {
		row := &rows[i]
		res.Resources = append(res.Resources, &sdk.Resource{URI: contractPrefix + row.Key, Name: row.Key,
			Title: row.Key + " contract", Description: clip(sentence(row.Description()), 512), MIMEType: "text/markdown"})
	}
	return res, nil
}

// readContract is resources/read of rowcall://contract/KEY: the row's
// contract document, as GET /api/dispatch?key=KEY serves it to the caller.
func (st *session) readContract(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	text, err := st.contractText(ctx, req.Params.URI)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}}, nil
}

// contractText is the contract document at uri, for the caller; a key the
// caller's scope does not cover reads as not found, as over the API.
func (st *session) contractText(ctx context.Context, uri string) (string, error) {
	key, ok := strings.CutPrefix(uri, contractPrefix)
	if !ok || key == "" || strings.ContainsAny(key, "/?#") {
		return "", sdk.ResourceNotFoundError(uri)
	}
	c, _ := st.current()
	row, err := st.h.cfg.Store.Lookup(ctx, key)
	var e *rowcall.Error
	if errors.As(err, &e) && e.Code == rowcall.ENotFound || err == nil && c.Token != nil && !c.Token.Covers(&row) {
		return "", sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return "", err
	}
	sum, err := st.h.cfg.Dispatcher.Contract(ctx, &row)
	if err != nil {
		return "", err
	}
	return contract.Build(&row, sum, st.base(), contract.Viewer{Owner: c.Owner, Token: c.Token}).Markdown(), nil
}

// subscribe is resources/subscribe of a contract the caller may read: the
// poller sends notifications/resources/updated when its document changes.
func (st *session) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	text, err := st.contractText(ctx, req.Params.URI)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.watched == nil {
		st.watched = map[string]string{}
	}
	st.watched[req.Params.URI] = text
	return nil
}

func (st *session) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	st.mu.Lock()
	delete(st.watched, req.Params.URI)
	st.mu.Unlock()
	return nil
}

// updated reads every contract the session watches again, after a
// directory change, and tells its subscribers of each that changed (a
// contract gone or out of scope is told once, then forgotten).
func (st *session) updated(ctx context.Context) {
	st.mu.Lock()
	watched := make(map[string]string, len(st.watched))
	for uri, text := range st.watched {
		watched[uri] = text
	}
	st.mu.Unlock()
	for uri, before := range watched {
		text, err := st.contractText(ctx, uri)
		if err == nil && text == before {
			continue
		}
		st.mu.Lock()
		if _, ok := st.watched[uri]; ok {
			if err != nil {
				delete(st.watched, uri)
			} else {
				st.watched[uri] = text
			}
		}
		st.mu.Unlock()
		st.server.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// base is the host's public address for the latest request (Config.Base).
func (st *session) base() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.baseURL
}

// complete is completion/complete: the contract template's key, from the
// keys the caller's scope covers; a call template's argument (completeCall).
func (st *session) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	p := req.Params
	res := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
	if p.Ref != nil && p.Ref.Type == "ref/resource" && strings.HasPrefix(p.Ref.URI, callPrefix) {
		st.completeCall(ctx, p, res)
		return res, nil
	}
	if p.Ref == nil || p.Ref.Type != "ref/resource" || p.Ref.URI != contractTemplate.URITemplate || p.Argument.Name != "key" {
		return res, nil
	}
	rows, err := st.h.cfg.Store.KeyCategories(ctx)
	if err != nil {
		return nil, err
	}
	c, _ := st.current()
	scope := rowcall.ScopeOf(c.Token)
	typed := strings.ToUpper(p.Argument.Value)
	for i := range rows {
		row := &rows[i]
		if !strings.HasPrefix(strings.ToUpper(row.Key), typed) || (scope != nil && !scope.Covers(row)) {
			continue
		}
		if len(res.Completion.Values) == maxCompletions {
			res.Completion.HasMore = true
			break
		}
		res.Completion.Values = append(res.Completion.Values, row.Key)
	}
	return res, nil
}

// withProgress passes a flow's steps and an agent's rounds on to a client
// that sent a progressToken, as notifications/progress, for a call the SDK
// answers (it sends them on the session's GET stream: its answers are plain
// JSON); the fast path streams them on the call's answer (progressStream).
func withProgress(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return ctx
	}
	ss := req.Session
	return rowcall.WithProgress(ctx, func(done, total float64, message string) {
		ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: done, Total: total, Message: message})
	})
}

// resultContent is a call's result as MCP content: text, or, for an fn
// row whose result is an image or audio, that media.
func (st *session) resultContent(ctx context.Context, key, result string) sdk.Content {
	data, mime, ok := media(result)
	if !ok {
		return &sdk.TextContent{Text: result}
	}
	if row := st.lookup(ctx, key); row == nil || row.Type != rowcall.TypeFn {
		return &sdk.TextContent{Text: result}
	}
	if strings.HasPrefix(mime, "audio/") {
		return &sdk.AudioContent{Data: data, MIMEType: mime}
	}
	return &sdk.ImageContent{Data: data, MIMEType: mime}
}

// media returns result's bytes and type when it is an image or audio: a
// base64 data: URL of an image/ or audio/ type, or bytes that are not UTF-8
// text and sniff as one (http.DetectContentType).
func media(result string) ([]byte, string, bool) {
	if rest, ok := strings.CutPrefix(result, "data:"); ok {
		head, payload, ok := strings.Cut(rest, ",")
		mime, isBase64 := strings.CutSuffix(head, ";base64")
		if !ok || !isBase64 || !(strings.HasPrefix(mime, "image/") || strings.HasPrefix(mime, "audio/")) || strings.ContainsAny(mime, ";, ") {
			return nil, "", false
		}
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(payload))
		return data, mime, err == nil
	}
	if result == "" || utf8.ValidString(result) {
		return nil, "", false
	}
	mime, _, _ := strings.Cut(http.DetectContentType([]byte(result)), ";")
	if strings.HasPrefix(mime, "image/") || strings.HasPrefix(mime, "audio/") {
		return []byte(result), mime, true
	}
	return nil, "", false
}
