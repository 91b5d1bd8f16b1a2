//go:build unix && !linux

package zookeeper

import "syscall"

// procAttr puts ZooKeeper in a process group of its own, so that the
// terminal's Ctrl-C reaches kraftlab only, which stops it in order.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
