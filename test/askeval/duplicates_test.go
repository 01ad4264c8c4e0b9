package askeval

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
)

// paraphrases are hand-written rewordings of twelve targets' WHAT and
// WHEN_TO_USE (target i*10): what a second author writing "the same row"
// would send. They choose rowcall.NearDuplicate with the targets themselves,
// 120 distinct capabilities written by hand.
var paraphrases = map[int]string{
	0:  "Give back all or part of a card payment via Stripe. a client was charged in error or returned what they bought.",
	1:  "Add an event with a title, a start and an end to the main Google Calendar. a meeting or an appointment has to be put on a person's calendar.",
	2:  "Put a file at a path in Dropbox. a file a task produced has to be kept in Dropbox.",
	3:  "Purchase a shipping label for a package at the lowest carrier price. an order has been packed and can be shipped.",
	4:  "Run a GitHub Actions workflow run again. a CI run failed because of a flaky test.",
	5:  "Convert a street address to latitude and longitude coordinates. an address has to be shown on a map.",
	6:  "The most recent share price quote for a ticker. somebody wants to know what a stock trades at.",
	7:  "Make a new Spotify playlist and put tracks in it. gathering songs for an event.",
	8:  "A day's steps, distance and active minutes from Fitbit. keeping track of daily activity.",
	9:  "Make a Shopify discount code that takes a percentage off. running a sale or making up for a poor experience.",
	10: "Run a Google Analytics report of users and sessions by a dimension. somebody wants to know how much traffic the website had.",
	11: "Text a phone number with an SMS message via Twilio. a person has to be alerted on their phone.",
}

// TestDuplicateThreshold holds rowcall.NearDuplicate to what it was chosen on: no
// two distinct targets are that near, and at least 11 of the 12 paraphrases
// are at least that near their original (and nearest it).
//
//	ROWCALL_ASKEVAL=1 go test ./test/askeval -run TestDuplicateThreshold -v
func TestDuplicateThreshold(t *testing.T) {
	enc := withEncoder(t)
	rows := Targets()
	texts := make([]string, len(rows))
	for i := range rows {
		texts[i] = rowcall.EmbedText(&rows[i])
	}
	vecs := enc.EmbedBatch(texts)
	dot := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			s += float64(a[i] * b[i])
		}
		return s
	}
	var nearest []float64
	for i := range vecs {
		m := -1.0
		for j := range vecs {
			if i != j {
				m = max(m, dot(vecs[i], vecs[j]))
			}
		}
		nearest = append(nearest, m)
		if m >= rowcall.NearDuplicate {
			t.Errorf("%s is %.3f near another target (threshold %.2f)", rows[i].Key, m, rowcall.NearDuplicate)
		}
	}
	slices.Sort(nearest)
	n := len(nearest)
	t.Logf("distinct targets, cosine to the nearest other: p50 %.3f p90 %.3f max %.3f", nearest[n/2], nearest[n*9/10], nearest[n-1])
	flagged := 0
	var got []string
	for i, p := range paraphrases {
		v := enc.Embed(p)
		c := dot(v, vecs[i*10])
		best := -1.0
		for j := range vecs {
			if j != i*10 {
				best = max(best, dot(v, vecs[j]))
			}
		}
		if c >= rowcall.NearDuplicate && c > best {
			flagged++
		}
		got = append(got, fmt.Sprintf("%.3f", c))
	}
	slices.Sort(got)
	t.Logf("paraphrases, cosine to their original: %v; %d of %d flagged", got, flagged, len(paraphrases))
	if flagged < 11 {
		t.Errorf("only %d of %d paraphrases are flagged", flagged, len(paraphrases))
	}
}
