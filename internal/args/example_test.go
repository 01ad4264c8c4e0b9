package args_test

import (
	"fmt"

	"github.com/rowcall/rowcall/internal/args"
)

// The seed's DIR_PATCH row: target "PATCH https://example.test/api/directory/$1",
// body template "$2+", called with a JSON body that holds a pipe.
func ExampleRender() {
	v := args.Values{Args: args.Split(`ROUTER|{"content":"a|b"}`)}
	fmt.Println(args.Render("https://example.test/api/directory/$1", args.URL, v))
	fmt.Println(args.Render("$2+", args.Body, v))
	// Output:
	// https://example.test/api/directory/ROUTER
	// {"content":"a|b"}
}

func ExampleRender_escaping() {
	v := args.Values{
		Args: args.Split(`say "hi" & bye|5, "x": 1`),
		Vars: map[string]string{"PREV": `{"current":{"temperature_2m":15.7}}`},
	}
	fmt.Println(args.Render(`{"text":"$1","n":$2}`, args.JSON, v))
	fmt.Println(args.Render("https://h.test/s?q=$1", args.URL, v))
	fmt.Println(args.Render("it is $PREV.current.temperature_2m C; $TODO stays", args.Raw, v))
	// Output:
	// {"text":"say \"hi\" & bye","n":"5, \"x\": 1"}
	// https://h.test/s?q=say+%22hi%22+%26+bye
	// it is 15.7 C; $TODO stays
}
