//go:build !linux

package main

import "time"

// preciseSleeper has nothing to prepare where sleepUntil uses the runtime's
// timers.
func preciseSleeper() {}

// sleepUntil blocks until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
