package view

// Sim is a simulated playground's run (kraftlab up --sim): the seed it is
// a function of, where it stands, and its history, a tree of branches.
type Sim struct {
	Seed uint64 `json:"seed"`
	// Branch is the branch the run is on, Step how many of its steps
	// it has applied (rewind moves Step back; the steps after it stay
	// until an action starts a new branch there).
	Branch int `json:"branch"`
	Step   int `json:"step"`
	// Branches are every branch so far, by ID from 1.
	Branches []SimBranch `json:"branches"`
}

// SimBranch is one line of a simulated run's history.
type SimBranch struct {
	ID int `json:"id"`
	// Parent is the branch this one left, at its step Fork; 0 for the
	// first branch.
	Parent int `json:"parent,omitempty"`
	Fork   int `json:"fork,omitempty"`
	// Steps are the branch's steps from its start, those it shares with
	// its parent included.
	Steps []SimStep `json:"steps"`
}

// SimStep is one step of a simulated run: an action, or a stretch of
// simulated time.
type SimStep struct {
	// Action is the step as the history shows it (kill 2, wait leader:
	// ran 1.5s); Replay the scenario line that takes it again (kill 2,
	// clock advance 1.5s).
	Action string `json:"action"`
	Replay string `json:"replay"`
	// AtMs is the simulated time the step began at, in milliseconds
	// since the run started.
	AtMs int64 `json:"atMs"`
}
