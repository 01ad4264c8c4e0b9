package fn_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/Los_Angeles without relying on the host's zoneinfo

	"github.com/rowcall/rowcall/runners/fn"
)

type nowResult struct {
	Now   string `json:"now"`
	Today string `json:"today"`
	Time  string `json:"time"`
	Zone  string `json:"zone"`
	ISO   string `json:"iso"`
}

// TestNow runs the C module NOW at fixed instants around both US DST changes,
// year and leap-day boundaries, and checks every field against Go's tz database.
func TestNow(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	instants := []string{
		"2026-03-08T09:59:59.999Z", // 01:59:59 PST, last second before DST
		"2026-03-08T10:00:00Z",     // 03:00 PDT
		"2026-11-01T08:59:59Z",     // 01:59:59 PDT
		"2026-11-01T09:00:00Z",     // 01:00 PST again
		"2026-07-26T04:36:19.832Z", // the seed's receipt: 21:36 PDT on the 25th
		"2027-01-01T07:59:59Z",     // 23:59:59 PST on New Year's Eve
		"2027-01-01T08:00:00Z",     // midnight
		"2028-02-29T20:00:00Z",     // leap day
		"2030-03-10T10:00:00Z",     // second Sunday of March, later year
		"2100-11-07T09:00:00Z",     // not a leap year, first Sunday of November
		"2007-03-11T10:00:00Z",     // first year of the current rule
	}
	for _, s := range instants {
		t.Run(s, func(t *testing.T) {
			at, _ := time.Parse(time.RFC3339Nano, s)
			r, _ := newRunner(t, fn.Config{Now: func() time.Time { return at }})
			got := runNow(t, r)
			local := at.In(la)
			zone, _ := local.Zone()
			want := nowResult{
				Now:   local.Format("Monday, January 2, 2006, 3:04:05 PM MST"),
				Today: local.Format("2006-01-02"),
				Time:  local.Format("15:04:05"),
				Zone:  zone,
				ISO:   local.Format("2006-01-02T15:04:05.000-07:00"),
			}
			if got != want {
				t.Fatalf("NOW at %s\n got %+v\nwant %+v", s, got, want)
			}
		})
	}
}

// TestNowRealClock: with the real clock the result is now, its zone and
// offset agree with the date, and today is the ISO's date.
func TestNowRealClock(t *testing.T) {
	r, _ := newRunner(t, fn.Config{})
	got := runNow(t, r)
	iso, err := time.Parse(time.RFC3339Nano, got.ISO)
	if err != nil {
		t.Fatalf("iso %q: %v", got.ISO, err)
	}
	if d := time.Since(iso); d < -time.Minute || d > time.Minute {
		t.Errorf("iso %s is %v away from now", got.ISO, d)
	}
	la, _ := time.LoadLocation("America/Los_Angeles")
	zone, offset := iso.In(la).Zone()
	_, isoOffset := iso.Zone()
	wantOffset := map[string]string{"PST": "-08:00", "PDT": "-07:00"}[got.Zone]
	if got.Zone != zone || isoOffset != offset || !strings.HasSuffix(got.ISO, wantOffset) {
		t.Errorf("zone %s, iso %s; Go says %s (offset %ds)", got.Zone, got.ISO, zone, offset)
	}
	if got.Today != got.ISO[:10] || got.Time != got.ISO[11:19] || !strings.HasSuffix(got.Now, " "+got.Zone) {
		t.Errorf("fields disagree: %+v", got)
	}
}

func runNow(t *testing.T, r *fn.Runner) nowResult {
	t.Helper()
	out := call(r, "now", "", "") // [NOW][/NOW]: no payload, default ["$1"], body ""
	var got nowResult
	dec := json.NewDecoder(strings.NewReader(out.Result))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil || !out.Material {
		t.Fatalf("NOW result %q: %v", out.Result, err)
	}
	return got
}
