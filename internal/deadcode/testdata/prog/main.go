// Command prog is the deadcode test's program: each function's name says
// whether the check must find it dead.
package main

import (
	"fmt"
	"os"
	"text/template"
)

type store struct{}

func (store) LiveCalled() string   { return "x" }
func (store) DeadExported() string { return "x" }     // reachable only through text/template's reflection
func (store) String() string       { return "store" } // fmt.Stringer: kept for the interface

type shape interface {
	Name() string
	Area() int
}

type square struct{}

func (square) Name() string { return "square" }
func (square) Area() int    { return 1 } // never called, but square is a shape

func deadFunc() {}

func onlyAsValue() {}

func liveGeneric[T any](v T) *T { return &v }

var p = liveGeneric(1)

func main() {
	var s any = store{}
	template.Must(template.New("t").Parse("{{.}}")).Execute(os.Stdout, s)
	fmt.Println(s.(store).LiveCalled(), *p)
	var sh shape = square{}
	fmt.Println(sh.Name())
	f := onlyAsValue
	f()
}
