package view

// Clock is the playground's cluster clock: the one time source of every
// timer of the engine, which the user may pause, slow down and advance.
type Clock struct {
	// Paused says cluster time stands still, since the wall time
	// PausedSinceMs (Unix milliseconds).
	Paused        bool  `json:"paused,omitempty"`
	PausedSinceMs int64 `json:"pausedSinceMs,omitempty"`
	// Slow is the slow-motion factor: cluster time passes at 1/Slow of
	// wall speed; 1 is normal speed, 0 an engine without a cluster clock.
	Slow int `json:"slow"`
	// NowMs is the cluster time when the view was taken, in Unix
	// milliseconds; it is behind Timestamp (wall) by LagMs, the time the
	// cluster spent paused and slowed, less what it was advanced by hand.
	NowMs int64 `json:"nowMs"`
	LagMs int64 `json:"lagMs"`
}
