package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/scenario"
)

// Whether a scenario file fits a running playground (scenario run
// --session NAME): the file's up line asks for a shape and settings, and
// the playground has its own.
//
// A file fits a playground with its controllers, its --set values and its
// --profile (when the up line names one), and its brokers, or any brokers
// when the file asks for none. The voters are what a quorum lesson is
// about, so their count must match; brokers only observe the metadata
// quorum, and a file that asks for none names none (its node IDs are
// checked against its own shape), so a playground's brokers only watch
// it. A file that asks for brokers gets exactly as many: which broker
// holds which replica depends on how many there are.

// upRequest is what a scenario's up line asks of its playground.
type upRequest struct {
	shape nodeShape
	// profile is the profile the line names, "" when it names none.
	profile string
	// sets are the line's --set key=value pairs, in order.
	sets []string
	// quorum is the line's --quorum, "" when it names none.
	quorum string
}

// allSets are the line's --set values with its --quorum as the setting.
func (r upRequest) allSets() []string {
	o := upOptions{sets: r.sets, quorum: r.quorum}
	sets, _ := o.allSets()
	return sets
}

// readUp reads a scenario's up line (up's defaults without one); ok is
// false when the line is bad, which its own check reports.
func readUp(e *env, up *scenario.Step) (upRequest, bool) {
	cmd, o := upCommand(&env{stdout: io.Discard, stderr: io.Discard, getenv: e.getenv})
	where := "up's default shape (the file has no up line)"
	if up != nil {
		if err := cmd.ParseFlags(up.Args[1:]); err != nil {
			return upRequest{}, false
		}
		where = fmt.Sprintf("the up line (%s)", up.Pos())
	}
	if _, err := o.allSets(); err != nil {
		return upRequest{}, false
	}
	r := upRequest{shape: nodeShape{controllers: o.controllers, brokers: o.brokers, where: where}, sets: o.sets, quorum: o.quorum}
	if cmd.Flags().Changed("profile") {
		r.profile = o.profile
	}
	return r, true
}

// misfit says how r does not fit the playground att, as the two halves of
// "the file asks for A, but the playground runs B"; "" when it fits.
func (r upRequest) misfit(att *attached) (asks, runs string) {
	var a, b []string
	if r.shape.controllers != att.shape.controllers || (r.shape.brokers != att.shape.brokers && r.shape.brokers != 0) {
		a = append(a, shapeWords(r.shape))
		b = append(b, shapeWords(att.shape))
	}
	if r.profile != "" && r.profile != att.profile {
		a = append(a, "profile "+r.profile)
		b = append(b, "profile "+att.profile)
	}
	// The line's values as the playground would spell them: its own
	// profile's, with the line's --set over them.
	profile := r.profile
	if profile == "" {
		profile = att.profile
	}
	if cfg, err := cluster.NewConfig(r.shape.controllers, r.shape.brokers, cluster.ProfileName(profile), r.allSets(), ""); err == nil && att.settings != nil {
		var keys []string
		for _, kv := range r.allSets() {
			k, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			want, _ := cfg.Settings.Get(k)
			if have := att.settings[k]; have != want {
				a = append(a, k+"="+want)
				b = append(b, k+"="+have)
			}
		}
	}
	if len(a) == 0 {
		return "", ""
	}
	return strings.Join(a, ", "), strings.Join(b, ", ")
}

// shapeWords spells a shape: "1 controller and 3 brokers".
func shapeWords(s nodeShape) string {
	return plural(int64(s.controllers), "controller") + " and " + plural(int64(s.brokers), "broker")
}

// upLineFor is the up command that starts a playground r fits, on the
// session of att, as README's recipe starts one.
func (r upRequest) upLineFor(att *attached) string {
	line := fmt.Sprintf("%s up --headless --session %s --controllers %d --brokers %d", self, att.session.Name, r.shape.controllers, r.shape.brokers)
	if r.profile != "" {
		line += " --profile " + r.profile
	}
	if r.quorum != "" {
		line += " --quorum " + r.quorum
	}
	for _, kv := range r.sets {
		line += " --set " + kv
	}
	return line + " &"
}

// fitError is the error of an up line that does not fit att: what it asks
// for and what the playground runs, then the commands that stop it and
// start one that fits, each on a line of its own.
func (r upRequest) fitError(att *attached, asks, runs string) error {
	return fmt.Errorf("the file asks for %s, but %s runs %s; a file fits a playground with its controllers, --set values and --profile, and its brokers (any, if it asks for none). To start one that fits:\n    %s down%s\n    %s",
		asks, att.shape.where, runs, self, sessionFlag(att.session.Name), r.upLineFor(att))
}

// checkerFor checks the lines of s: each as checkLine does, then its node
// IDs against the shape of the playground it will run on: att's when
// given (which the up line must fit), else the up line's.
func (e *env) checkerFor(s *scenario.Script, att *attached) func(args []string) error {
	req, ok := readUp(e, s.Up)
	shape := req.shape
	if att != nil {
		shape = att.shape
		if ok && s.Up != nil {
			if asks, runs := req.misfit(att); asks != "" {
				upErr := req.fitError(att, asks, runs)
				return func(args []string) error {
					if len(args) > 0 && args[0] == "up" {
						return upErr
					}
					if err := e.checkLine(args); err != nil {
						return err
					}
					return checkNodeIDs(args, att.shape)
				}
			}
			// A file that fits names only nodes its own shape has.
			shape = req.shape
		}
		ok = true
	}
	return func(args []string) error {
		if err := e.checkLine(args); err != nil || !ok {
			return err
		}
		if addsController(args) {
			// The lines after it may name the controller it adds.
			shape.controllers++
		}
		return checkNodeIDs(args, shape)
	}
}

// addsController reports whether a scenario line is "controllers add",
// which starts the controller with the next id.
func addsController(args []string) bool {
	return len(args) >= 2 && args[0] == "controllers" && args[1] == "add"
}
