package test

import "syscall"

// procAttr starts a child in its own process group, and has the kernel send
// it SIGTERM should the test binary die first.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
