package main

import "errors"

func call(args []string) error    { return errors.New("call: not built yet") }
func receipt(args []string) error { return errors.New("receipt: not built yet") }
