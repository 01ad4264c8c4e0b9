//go:build !linux

package test

import "syscall"

// procAttr starts a child in its own process group.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
