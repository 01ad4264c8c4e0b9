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

// An array query parameter, form style: $1[&status=] repeats the name for
// each item of a JSON array argument, and a plain argument is one value.
// Check refuses what cannot be a list.
func ExampleRender_join() {
	const target = "https://example.test/pet/findByStatus?status=$1[&status=]"
	fmt.Println(args.Render(target, args.URL, args.Values{Args: args.Split(`["available","sold"]`)}))
	fmt.Println(args.Render(target, args.URL, args.Values{Args: args.Split(`sold`)}))
	fmt.Println(args.Render("https://example.test/pets/$1[,]", args.URL, args.Values{Args: args.Split(`[1,2]`)}))
	fmt.Println(args.Check(target, args.Values{Args: args.Split(`{"status":"sold"}`)}))
	// Output:
	// https://example.test/pet/findByStatus?status=available&status=sold
	// https://example.test/pet/findByStatus?status=sold
	// https://example.test/pets/1,2
	// argument 1 is a JSON object; $1[&status=] takes a JSON array of strings, numbers or booleans, or one plain value
}
