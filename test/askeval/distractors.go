package askeval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rowcall/rowcall"
)

// Seed is the distractors' fixed seed: every run scores the same directory.
const Seed = 17

// Distractor is a generated admin or housekeeping row and the housekeeping
// verb it was built from.
type Distractor struct {
	Row  rowcall.Row
	Verb string
}

// nouns are the things each domain's targets act on, in the targets' words.
var nouns = map[string][]string{
	"payments":    {"refunds", "charges", "payment links", "payouts", "card authorizations", "chargeback disputes"},
	"weather":     {"temperature readings", "forecasts", "weather alerts", "air quality stations", "uv index samples", "precipitation records"},
	"calendar":    {"calendar events", "meetings", "free busy lookups", "booking links", "attendees", "scheduling conflicts"},
	"email":       {"email messages", "inbox filters", "newsletters", "email addresses", "reply drafts", "mailing lists"},
	"files":       {"files", "drive permissions", "storage buckets", "folders", "zip archives", "trashed items"},
	"crm":         {"leads", "deals", "contacts", "call activities", "accounts", "pipeline stages"},
	"shipping":    {"shipping labels", "packages", "rate quotes", "courier pickups", "return labels", "parcels"},
	"hr":          {"time off requests", "payroll runs", "new hire records", "employees", "org chart entries", "interviews"},
	"devops":      {"workflow runs", "deployments", "incidents", "releases", "monitors", "pods"},
	"databases":   {"sql queries", "database snapshots", "collection documents", "cache keys", "query plans", "indexes"},
	"maps":        {"geocoded addresses", "driving routes", "places", "distance matrices", "map tiles", "coordinates"},
	"translation": {"translations", "detected languages", "subtitle files", "glossary terms", "app strings", "locales"},
	"finance":     {"stock quotes", "exchange rates", "crypto prices", "portfolios", "sec filings", "ticker symbols"},
	"social":      {"tweets", "shared articles", "scheduled posts", "brand mentions", "published photos", "followers"},
	"music":       {"playlists", "playback devices", "albums", "songs", "lyrics", "tracks"},
	"news":        {"headlines", "news articles", "news digests", "rss feeds", "fact checks", "press sources"},
	"health":      {"step counts", "doctor appointments", "medications", "bmi records", "symptom reports", "patients"},
	"travel":      {"flight offers", "hotel reservations", "visa rules", "flight statuses", "itineraries", "airports"},
	"ecommerce":   {"discount codes", "orders", "product stock", "product reviews", "abandoned carts", "products"},
	"security":    {"mfa factors", "breach reports", "tls certificates", "blocked ip addresses", "phishing reports", "users"},
	"analytics":   {"analytics reports", "funnels", "ab tests", "kpi metrics", "retention cohorts", "sessions"},
	"iot":         {"thermostats", "lights", "doorbell snapshots", "sensor readings", "smart locks", "devices"},
	"messaging":   {"sms messages", "slack channels", "whatsapp templates", "discord polls", "standup reminders", "phone numbers"},
	"documents":   {"pdf documents", "ocr jobs", "signature envelopes", "merged pdf files", "converted files", "contracts"},
}

// chores are the housekeeping verbs: what an admin does to a domain's things,
// never what a target does. {n} is the noun, {m} another of the domain's
// nouns, {q} the qualifier, {v} the vendor, {d} the domain.
var chores = []struct{ verb, what, when string }{
	{"list", "List {n} {q} with their {m}.", "an admin reviews {n} in the {v} console."},
	{"audit", "Audit changes to {n} and {m} settings {q}.", "a compliance review asks who changed {v} {n} configuration."},
	{"export", "Export {n} {q} with their {m} to a CSV report.", "finance or support wants {v} {n} in a spreadsheet."},
	{"archive", "Archive {n} and their {m} {q} into cold storage.", "old {n} clutter the {v} workspace."},
	{"rotate", "Rotate the API secret used by {n} and {m} webhooks {q}.", "a {v} credential is due for rotation."},
	{"configure", "Configure default {n} settings for {m} {q}.", "onboarding a workspace to {v} {d}."},
	{"sync", "Sync {n} and {m} {q} to the data warehouse.", "reporting needs fresh {v} {n} data."},
	{"purge", "Purge soft-deleted {n} {q} after the retention period.", "storage for {v} {n} and {m} must be reclaimed."},
	{"describe", "Describe the schema of {n} and {m} records {q}.", "a developer integrates with {v} {n}."},
	{"count", "Count {n} per {m} {q} for the usage dashboard.", "capacity planning for {v} needs totals."},
	{"backfill", "Backfill missing {m} on {n} {q}.", "a migration left {v} {n} incomplete."},
	{"reindex", "Rebuild the search index of {n} and {m} {q}.", "{n} no longer show up in {v} admin search."},
	{"validate", "Validate {n} {q} and their {m} against the schema.", "imported {v} {n} may be malformed."},
	{"migrate", "Migrate {n} and {m} {q} to the new {v} API version.", "the old {d} API version is being retired."},
	{"tag", "Tag {n} {q} with a cost center label.", "billing wants {v} spend on {n} and {m} per team."},
	{"diff", "Diff {n} and {m} configuration {q} between staging and production.", "{v} behaves differently in two environments."},
	{"quota", "Show the API quota and rate limits for {n} {q}.", "{v} calls for {n} and {m} start failing with 429."},
	{"expire", "Set how long {n} and {m} {q} are kept before they expire.", "legal asks about the lifetime of stored {v} {n}."},
	{"permissions", "Review admin permissions on {n} and {m} {q}.", "an access review covers the {v} {d} tools."},
	{"deprecate", "Mark {n} fields {q} as deprecated in the admin schema.", "cleaning up unused {v} fields on {m}."},
}

// quals narrow a chore, as admin rows do: key suffix and phrase.
var quals = []struct{ key, phrase string }{
	{"WORKSPACE", "for one workspace"}, {"STALE", "older than 90 days"}, {"ALL_REGIONS", "across all regions"},
	{"SANDBOX", "in the sandbox"}, {"QUARTERLY", "for the current quarter"}, {"BY_OWNER", "grouped by owner"},
	{"LABELED", "with a given label"}, {"TEST_TENANT", "for a test tenant"}, {"EU", "in the EU data region"},
	{"NIGHTLY", "in the nightly batch"},
}

// MaxDistractors is how many different distractors there are.
var MaxDistractors = func() int {
	n := 0
	for _, ns := range nouns {
		n += len(ns) * len(chores) * len(quals)
	}
	return n
}()

// Distractors returns n admin and housekeeping rows (at most MaxDistractors) that
// share the targets' vocabulary (their vendors, categories and nouns) but not
// their actions, in an order fixed by seed. Vendors are the first word of the
// domain's target keys.
func Distractors(n int, seed uint64) []Distractor {
	vendors := map[string][]string{}
	var domains []string
	for _, t := range Targets() {
		if _, ok := vendors[t.Category]; !ok {
			domains = append(domains, t.Category)
		}
		v, _, _ := strings.Cut(t.Key, "_")
		if !slices.Contains(vendors[t.Category], v) {
			vendors[t.Category] = append(vendors[t.Category], v)
		}
	}
	type combo struct {
		domain, noun string
		chore, qual  int
	}
	var all []combo
	for _, d := range domains {
		for _, no := range nouns[d] {
			for c := range chores {
				for q := range quals {
					all = append(all, combo{d, no, c, q})
				}
			}
		}
	}
	if n < 0 || n > len(all) {
		panic(fmt.Sprintf("askeval: 0 to %d distractors, not %d", len(all), n))
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	out := make([]Distractor, 0, n)
	for _, c := range all[:n] {
		ch, q := chores[c.chore], quals[c.qual]
		vs := vendors[c.domain]
		vendor := vs[rng.IntN(len(vs))]
		up := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, " ", "_")) }
		key := vendor + "_" + up(ch.verb) + "_" + up(c.noun) + "_" + q.key
		other := nouns[c.domain][rng.IntN(len(nouns[c.domain]))]
		for other == c.noun {
			other = nouns[c.domain][rng.IntN(len(nouns[c.domain]))]
		}
		fill := strings.NewReplacer("{n}", c.noun, "{m}", other, "{q}", q.phrase, "{v}", strings.ToLower(vendor), "{d}", c.domain)
		r := rowcall.NewRow(key, rowcall.TypeHTTP)
		r.Category = c.domain
		r.Target = "POST https://admin." + c.domain + ".example.test/v1/" + strings.ReplaceAll(c.noun, " ", "-") + "/" + ch.verb
		r.Content = "# WHAT: " + fill.Replace(ch.what) + "\n# WHEN_TO_USE: " + fill.Replace(ch.when) + "\n# ARGS: $1=workspace id | $2=options"
		out = append(out, Distractor{Row: r, Verb: ch.verb})
	}
	return out
}
