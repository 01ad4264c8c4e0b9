// Package rowgen generates large, realistic directories for tests and
// benchmarks of discovery: many plausible capabilities that share vocabulary
// with a few hand-written targets, and plain-word questions for those targets
// written without copying the targets' wording.
package rowgen

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/rowcall/rowcall"
)

var (
	verbs = []string{"List", "Create", "Archive", "Export", "Import", "Count", "Rename", "Tag", "Flag", "Merge", "Split", "Audit",
		"Approve", "Reject", "Schedule", "Cancel", "Summarize", "Validate", "Publish", "Unpublish", "Assign", "Reassign", "Lock", "Unlock", "Clone"}
	objects = []string{"invoices", "customers", "tickets", "projects", "leads", "orders", "shipments", "contracts", "employees", "vendors",
		"campaigns", "articles", "comments", "subscriptions", "refunds", "coupons", "warehouses", "devices", "licenses", "meetings",
		"repositories", "builds", "deployments", "alerts", "dashboards", "reports", "datasets", "models", "prompts", "webhooks",
		"playlists", "recipes", "courses", "students", "patients", "appointments", "listings", "reviews", "surveys", "budgets"}
	scopes = []string{"for one account", "in a workspace", "older than a date", "by owner", "across regions", "for a team",
		"in the sandbox", "with a label", "from a CSV file", "for the current quarter"}
	systems = []string{"crm", "billing", "support", "hr", "ops", "marketing", "cms", "devops", "analytics", "commerce"}
)

// Noise returns n generated rows whose keys never collide with Targets'.
func Noise(n int, seed uint64) []rowcall.Row {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]rowcall.Row, 0, n)
	for i := range n {
		v, o, s, sys := verbs[rng.IntN(len(verbs))], objects[rng.IntN(len(objects))], scopes[rng.IntN(len(scopes))], systems[rng.IntN(len(systems))]
		key := fmt.Sprintf("%s_%s_%s_%05d", strings.ToUpper(sys), strings.ToUpper(v), strings.ToUpper(o), i)
		r := rowcall.NewRow(key, rowcall.TypeHTTP)
		r.Category = sys
		r.Target = fmt.Sprintf("POST https://%s.example.test/v1/%s/%s", sys, o, strings.ToLower(v))
		r.Content = fmt.Sprintf("# WHAT: %s %s %s in the %s system.\n# WHEN_TO_USE: a workflow needs to %s %s %s.\n# ARGS: $1=id | $2=options\n# EX: [%s]42|{}[/%s]\n$2+",
			v, o, s, sys, strings.ToLower(v), o, s, key, key)
		out = append(out, r)
	}
	return out
}

// Target is a capability a test expects ask to find, with questions a person
// would type, worded differently from the row.
type Target struct {
	Row       rowcall.Row
	Questions []string
}

// Targets are the rows the ranking tests look for.
func Targets() []Target {
	mk := func(key, category, what, when, args string, questions ...string) Target {
		r := rowcall.NewRow(key, rowcall.TypeHTTP)
		r.Category, r.Target = category, "GET https://"+category+".example.test/"+strings.ToLower(key)
		r.Content = fmt.Sprintf("# WHAT: %s\n# WHEN_TO_USE: %s\n# ARGS: %s", what, when, args)
		return Target{r, questions}
	}
	return []Target{
		mk("WEATHER_CURRENT", "weather", "Current temperature in Celsius for one latitude and longitude, from a forecast API.",
			"a capability needs the live temperature at a coordinate.", "$1=latitude | $2=longitude",
			"how hot is it outside at a place", "temperatures right now near coordinates"),
		mk("SMS_DELIVER", "messaging", "Deliver a short text to a mobile phone number through the carrier gateway.",
			"someone must be notified on their phone.", "$1=phone number | $2=text",
			"send an sms to a phone", "text someone's mobile"),
		mk("FX_CONVERT", "finance", "Convert an amount between two currencies at today's exchange rate.",
			"prices must be shown in another currency.", "$1=amount | $2=from currency | $3=to currency",
			"how many euros is 100 dollars", "currency conversion rates"),
		mk("GEOCODE_ADDRESS", "maps", "Turn a street address into latitude and longitude coordinates.",
			"a postal address must be placed on a map.", "$1=address",
			"coordinates for a street address", "where on the map is this address"),
		mk("TRANSLATE_TEXT", "language", "Translate a passage of text into another language.",
			"a message must be read by someone who speaks another language.", "$1=target language | $2+=text",
			"translate this paragraph to french", "turn english into spanish"),
		mk("IMAGE_RESIZE", "media", "Resize a picture to a given width and height and return the new image URL.",
			"an uploaded photo is too large for a page.", "$1=image url | $2=width | $3=height",
			"make a photo smaller", "shrink an image's dimensions"),
		mk("CLOCK_PACIFIC", "time", "The current date and time in Pacific time.",
			"any object or model needs to know what time it is.", "none",
			"what time is it in california", "today's date on the west coast"),
		mk("PDF_SUMMARY", "documents", "Summarize a PDF document into a few paragraphs.",
			"a long document must be understood quickly.", "$1=pdf url",
			"give me the gist of a pdf", "short summary of a long report file"),
	}
}
