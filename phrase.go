package rowcall

// Phrase is a question ask learned for a row (internal/learn): asked by a
// teaching credential before it called the row (SourceUse), written by a
// model for the row (SourceModel), or by the owner (SourceOwner). It ranks
// the row only for asks under the same Scope, and is not part of the row,
// its version or its contract.
type Phrase struct {
	ID        string `json:"id"` // lrn_…
	Key       string `json:"key"`
	Scope     string `json:"scope"` // the asker's scope (learn.ScopeID; "*": the whole directory)
	Text      string `json:"phrase"`
	Source    string `json:"source"`
	Approved  bool   `json:"approved"` // the owner's: never aged out nor pushed out by the cap
	Actor     string `json:"actor"`    // who taught it
	Receipt   string `json:"receipt,omitempty"`
	Uses      int    `json:"uses"` // how many times it was taught
	CreatedAt string `json:"created_at"`
	UsedAt    string `json:"used_at"`

	Model  string    `json:"-"` // the EmbedModel.ID() Vector is of ("" when not embedded)
	Vector []float32 `json:"-"`
}

// Where a Phrase came from.
const (
	SourceUse   = "use"
	SourceModel = "model"
	SourceOwner = "owner"
)
