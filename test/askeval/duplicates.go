package askeval

import "strings"

// Paraphrases are hand-written rewordings of twelve targets' WHAT and
// WHEN_TO_USE (target i*10): what a second author writing "the same row"
// would send. They choose rowcall.NearDuplicate with the targets themselves,
// 120 distinct capabilities written by hand.
var Paraphrases = map[int]string{
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

// SplitParaphrase is a paraphrase's WHAT and WHEN_TO_USE: the text before and
// after its first ". " followed by a lower-case letter.
func SplitParaphrase(p string) (what, when string) {
	for i := 0; i+2 < len(p); i++ {
		if strings.HasPrefix(p[i:], ". ") && p[i+2] >= 'a' && p[i+2] <= 'z' {
			return p[:i+1], p[i+2:]
		}
	}
	return p, ""
}
