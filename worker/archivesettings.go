package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/sqlstore"
)

// archiveSettings reads ROWCALL_RECEIPT_SEGMENT and ROWCALL_RECEIPT_RETAIN.
func archiveSettings(segment, retain string) (int, time.Duration, error) {
	size, keep := sqlstore.DefaultSegmentSize, 30*24*time.Hour
	var err error
	if segment != "" {
		if size, err = strconv.Atoi(segment); err != nil || size < 1 {
			return 0, 0, &rowcall.Error{Code: rowcall.EInternal, Message: fmt.Sprintf("ROWCALL_RECEIPT_SEGMENT %q is not a whole number of receipts of at least 1", segment),
				HowToFix: "set ROWCALL_RECEIPT_SEGMENT in wrangler.toml's [vars] to the receipts per sealed segment, e.g. \"10000\""}
		}
	}
	if retain != "" {
		if keep, err = time.ParseDuration(retain); err != nil || keep < 0 {
			return 0, 0, &rowcall.Error{Code: rowcall.EInternal, Message: fmt.Sprintf("ROWCALL_RECEIPT_RETAIN %q is not a duration of 0 or more", retain),
				HowToFix: "set ROWCALL_RECEIPT_RETAIN in wrangler.toml's [vars] to how long sealed receipts stay in D1 too, e.g. \"720h\""}
		}
	}
	return size, keep, nil
}
