//go:build !unix

package zookeeper

import "syscall"

// procAttr has nothing to add where there are no process groups.
func procAttr() *syscall.SysProcAttr { return nil }
