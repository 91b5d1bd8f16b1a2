package view

// Clock is the playground's cluster clock: the one time source of every
// timer of the engine, which the user may pause, slow down and advance.
// Every time of a view is cluster time.
type Clock struct {
	// Paused says cluster time stands still, since the wall time
	// PausedSinceMs (Unix milliseconds).
	Paused        bool  `json:"paused,omitempty"`
	PausedSinceMs int64 `json:"pausedSinceMs,omitempty"`
	// Slow is the slow-motion factor: cluster time passes at 1/Slow of
	// wall speed; 1 is normal speed, 0 an engine without a cluster clock.
	Slow int `json:"slow"`
	// LagMs is how far cluster time (the view's Timestamp) is behind the
	// wall: the time the cluster spent paused and slowed, less what it was
	// advanced by hand.
	LagMs int64 `json:"lagMs"`
}
