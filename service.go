package rowcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
)

// The services the engine, the API and the MCP server work through, each as
// small as its callers need. Package sqlstore implements every one over
// database/sql (the embedded SQLite file, a libSQL server, or D1); tests may
// implement them with fakes.

// DirectoryReader reads the directory.
type DirectoryReader interface {
	// Lookup returns a row as stored (no row_num), enabled or not; an
	// *Error with ENotFound when there is none.
	Lookup(ctx context.Context, key string) (Row, error)
	// Get is Lookup with the row's row_num.
	Get(ctx context.Context, key string) (Row, error)
	// List returns one page of rows in canonical order.
	List(ctx context.Context, f Filter) (Page, error)
	// AllRows returns every row the scope covers (nil: every row); enabled and
	// planner-visible ones only unless all.
	AllRows(ctx context.Context, scope *Scope, all bool) ([]Row, error)
	// CountRows is how many rows AllRows would return; EachRow calls fn with
	// each of them in the same order as it is read, without collecting them
	// (the registry document streams).
	CountRows(ctx context.Context, scope *Scope, all bool) (int, error)
	EachRow(ctx context.Context, scope *Scope, all bool, fn func(*Row) error) error
	// RowsByKey returns the stored rows among keys.
	RowsByKey(ctx context.Context, keys []string) (map[string]Row, error)
	// KeyCategories returns every row's key and category (nothing else set).
	KeyCategories(ctx context.Context) ([]Row, error)
	// Search ranks rows for plain words (ask).
	Search(ctx context.Context, query string, f SearchFilter) ([]Hit, error)
	// History returns a row's versions from the event log, oldest first.
	History(ctx context.Context, key string) ([]Event, error)
	// LastEvent is the newest event id: every change to rows, modules or
	// breakers moves it, whoever made it (embedding a row does not).
	LastEvent(ctx context.Context) (int64, error)
	// ModuleUsers lists the keys of the fn rows that run module.
	ModuleUsers(ctx context.Context, module string) ([]string, error)
}

// WithWriter returns ctx naming who writes the directory through it: the
// actor the directory's write path (DirectoryService) records on every row
// it writes and every deletion (Row.WrittenBy). The API names the caller of
// each request that may write; the host names itself for what it writes on
// its own.
func WithWriter(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, writerKey{}, actor)
}

// Writer is the actor WithWriter named in ctx, or "" when none.
func Writer(ctx context.Context) string {
	s, _ := ctx.Value(writerKey{}).(string)
	return s
}

type writerKey struct{}

// The host's own writers: the example rows a new host installs, and the MCP
// drift check that runs with no one asking.
const (
	WriterExamples = "rowcall:examples"
	WriterMCPSync  = "rowcall:mcp-sync"
)

// DirectoryWriter changes the directory. Every write is one statement (D1
// has no interactive transactions) and records its event by trigger.
type DirectoryWriter interface {
	// Create inserts a new row; EConflict when the key is taken.
	Create(ctx context.Context, r Row) (Row, error)
	// Replace writes r over the row with version ifVersion (any version when
	// 0); EVersionConflict (VersionConflict) when it moved.
	Replace(ctx context.Context, r Row, ifVersion int64) (Row, error)
	// Delete removes a row, at version ifVersion unless 0; its delete event
	// names by as the writer (Row.WrittenBy). The rows Create, Replace and
	// Upsert write carry theirs.
	Delete(ctx context.Context, key string, ifVersion int64, by string) error
	// Upsert writes rows in batches under D1's limits.
	Upsert(ctx context.Context, rows []Row) error
}

// Directory reads and writes the directory.
type Directory interface {
	DirectoryReader
	DirectoryWriter
}

// DirectoryService is the directory as the API and MCP change it
// (internal/directory implements it over a Directory): a whole row written
// passes Check (the hygiene gate and the auth check), a patch merges against
// the current version, every row written and every deletion names the
// context's Writer (whatever the row said), and every change tells the
// subscribers (the dispatcher's row cache) before the write's answer goes out.
type DirectoryService interface {
	DirectoryReader
	Check(r *Row) error
	Create(ctx context.Context, r Row) (Row, error)
	Replace(ctx context.Context, r Row, ifVersion int64) (Row, error)
	Patch(ctx context.Context, key string, ifVersion int64, change func(*Row) error) (Row, error)
	Delete(ctx context.Context, key string, ifVersion int64) error
	Import(ctx context.Context, rows []Row) error
	// Changed tells the subscribers that something else calls read changed
	// (a module, a breaker).
	Changed()
}

// Breakers keeps each row's consecutive auth failures: BreakerThreshold of
// them open the row's breaker for BreakerCooldown.
type Breakers interface {
	Breaker(ctx context.Context, key string) (failures int, opened time.Time, err error)
	RecordAuth(ctx context.Context, key string, failed bool, now time.Time) error
	ClearBreaker(ctx context.Context, key string) (bool, error)
}

// Tokens keeps capability tokens; a token's secret is stored only as its
// SHA-256.
type Tokens interface {
	CreateToken(ctx context.Context, t *Token, secretSHA256 string) error
	TokenBySecret(ctx context.Context, secretSHA256 string) (Token, error)
	Token(ctx context.Context, id string) (Token, error)
	Tokens(ctx context.Context) ([]Token, error)
	RevokeToken(ctx context.Context, id string) (Token, error)
}

// ReceiptReader reads the stored receipt chain.
type ReceiptReader interface {
	// Receipts returns up to limit receipts with seq > after, in chain order.
	Receipts(ctx context.Context, after int64, limit int) ([]Receipt, error)
	// EachReceipt calls fn with each of those receipts as it is read (the
	// export streams).
	EachReceipt(ctx context.Context, after int64, limit int, fn func(*Receipt) error) error
	Receipt(ctx context.Context, id string) (Receipt, error)
	// ChainHead is the newest receipt's seq and sha256 (0, "" for none).
	ChainHead(ctx context.Context) (seq int64, sha256 string, err error)
	// Trace returns every receipt of one call and its nested calls.
	Trace(ctx context.Context, trace string) ([]Receipt, error)
}

// ReceiptWriter appends receipts to the chain. Each channel receives nil once
// the receipt is stored (a call is acknowledged only then), or the error.
type ReceiptWriter interface {
	Append(r Receipt) <-chan error
	// AppendIf stores r only while the event log's newest id is snapshot;
	// otherwise the channel receives ErrStale and nothing is stored.
	AppendIf(r Receipt, snapshot int64) <-chan error
}

// ErrStale is what ReceiptWriter.AppendIf reports when the directory moved
// past the call's snapshot while it ran.
var ErrStale = errors.New("the directory changed while the call ran")

// Timestamp is the format of updated_at and created_at, as the seed prints
// it: 2026-07-26T04:36:19.832Z.
const Timestamp = "2006-01-02T15:04:05.000Z"

// BreakerThreshold is how many consecutive 401/403 answers open a row's
// breaker, and BreakerCooldown how long it stays open.
const (
	BreakerThreshold = 8
	BreakerCooldown  = time.Hour
)

// Filter selects rows for List. Zero values select everything.
type Filter struct {
	Type     Type
	Category string
	Enabled  *int64
	Scope    *Scope // only rows a token covers, when set
	Limit    int    // at most MaxPage; DefaultPage when 0
	Offset   int

	// Bare asks for the rows alone: no row_num, and Total 0. A filtered page
	// then reads its matches (up to its last one on the canonical order's
	// index, or a type's or category's through theirs) instead of numbering
	// the whole directory. The MCP tool list and the agent catalog need no
	// row_num.
	Bare bool
}

// Scope is a token's scope: rows with one of Keys, or in one of Categories
// ("*" is every row). A scope asked about a second row keeps sets of its
// keys and categories (Holds), so its lists are not changed once it is used.
type Scope struct {
	Keys, Categories []string

	asked atomic.Bool               // Holds ran
	sets  atomic.Pointer[scopeSets] // built by its second run
}

// Page sizes for List.
const (
	DefaultPage = 100
	MaxPage     = 1000
)

// Page is one page of List.
type Page struct {
	Rows  []Row `json:"rows"`
	Total int   `json:"total"`
}

// SearchFilter narrows an ask.
type SearchFilter struct {
	Scope *Scope // only rows a token covers, when set
	Limit int    // 10 when 0, at most 100
	All   bool   // include disabled and planner-hidden rows (did_you_mean for the owner)
	Near  bool   // drop hits far below the best (internal/vectors.Ranker: Floor, WordsFloor)
	// For is who the search is made for, when a rerank (Reranker) may be
	// made for them: a paid model call, charged to their token. nil: none.
	For *Asker
}

// Asker is who asked for a search: the owner, a token's holder (Token), or
// anonymous (neither; a public read).
type Asker struct {
	Owner bool
	Token *Token
}

// An ask's bounds: a question (ask=, search_capabilities' query) of more
// than MaxAskBytes bytes or MaxAskWords words is refused by CheckAsk before
// anything is searched or embedded. A capability is found by the few words
// that name its task, so neither bound narrows a real question; together
// they bound the work of one ask (docs/security.md, "Ask").
const (
	MaxAskBytes = 2000
	MaxAskWords = 64
)

// EAskTooLong is the code of a question past MaxAskBytes or MaxAskWords.
const EAskTooLong Code = "ask_too_long"

// CheckAsk refuses a question past an ask's bounds. A word is a run of
// letters and digits, as the word search reads it.
func CheckAsk(query string) error {
	size := fmt.Sprintf("%d bytes", len(query))
	if len(query) <= MaxAskBytes {
		words := len(strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
		if words <= MaxAskWords {
			return nil
		}
		size = fmt.Sprintf("%d words", words)
	}
	return &Error{Code: EAskTooLong,
		Message:  fmt.Sprintf("the question is %s; an ask takes at most %d words in %d bytes", size, MaxAskWords, MaxAskBytes),
		HowToFix: `ask in a few plain words for the task you want done (e.g. "refund a payment"); the words that name the task find its row`}
}

// Hit is one ranked row.
type Hit struct {
	Row   Row     `json:"row"`
	Score float64 `json:"score"` // the store's Search: bm25, lower is better; internal/vectors.Ranker's (what every caller sees): its mix, higher is better
}

// Event is one record of the append-only event log.
type Event struct {
	ID      int64           `json:"id"`
	Kind    string          `json:"kind"`
	Action  string          `json:"action"`
	Key     string          `json:"key"`
	Version int64           `json:"version"`
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	At      string          `json:"at"`
}

// VersionConflict is the error for a write made against a version that is no
// longer current.
func VersionConflict(cur Row, sent int64) error {
	return &Error{Code: EVersionConflict,
		Message:  "the row changed since you read it: you sent version " + strconv.FormatInt(sent, 10) + ", the current version is " + strconv.FormatInt(cur.Version, 10),
		HowToFix: "GET the row again, reapply your change, and send If-Match with the new ETag",
		Extra:    map[string]any{"key": cur.Key, "current_version": cur.Version}}
}

// ScopeOf is the token's scope as a filter; nil (every row) for the owner.
func ScopeOf(t *Token) *Scope {
	if t == nil {
		return nil
	}
	return &Scope{Keys: t.Keys, Categories: t.Categories}
}
