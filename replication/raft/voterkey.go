package raft

// A Vote or BeginQuorumEpoch (v1+) names the voter it is for by id and
// directory id, as the sender's voter set has it (KIP-853): a node that
// lost its disk comes back with its old id and a new directory id, and
// must not vote, or follow, as the voter it no longer is. The receiver
// answers INVALID_VOTER_KEY when the key is another replica's (Kafka's
// isValidVoterKey); a voter id of -1 names nobody in particular, and a
// zero directory id any directory of that id.

// voterDirectory is the directory id the voter set in force names for
// id; zero when it names none (a static quorum's voters, initial
// controllers formatted without theirs) or id is no voter.
func (n *Node) voterDirectory(id int32) DirectoryID {
	v, _ := n.history.last().Voter(id)
	return v.DirectoryID
}

// validVoterKey reports whether a request for the voter (id, dir) is for
// this node.
func (n *Node) validVoterKey(version int16, id int32, dir DirectoryID) bool {
	if version < 1 || id < 0 {
		return true
	}
	return id == n.id && (dir.IsZero() || dir == n.cfg.DirectoryID)
}
