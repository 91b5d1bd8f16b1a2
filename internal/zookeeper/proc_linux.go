package zookeeper

import "syscall"

// procAttr puts ZooKeeper in a process group of its own, so that the
// terminal's Ctrl-C reaches kraftlab only, which stops it in order, and has
// the kernel kill it when kraftlab dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
