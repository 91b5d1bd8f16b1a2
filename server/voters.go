package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// folderDirectoryID gives the node's raft client the directory id of its
// folder (formatting the folder on its first start), as Kafka's
// KafkaRaftManager is given the metadata log folder's: every node, broker
// or controller, names itself by it in its Fetch requests. The id is read
// again at each start: a wiped folder is formatted with a new one.
func folderDirectoryID(cfg *Config) error {
	id := cfg.Raft.Raft.NodeID
	nodeDir, clusterID := cfg.Raft.Dir, cfg.Raft.Raft.ClusterID
	dir, err := directoryID(nodeDir, clusterID, id)
	if err != nil {
		return err
	}
	cfg.Raft.Raft.DirectoryID = raft.DirectoryID(dir)
	cfg.Raft.DirectoryID = func() (raft.DirectoryID, error) {
		d, err := directoryID(nodeDir, clusterID, id)
		return raft.DirectoryID(d), err
	}
	return nil
}

// dynamicVoter gives a controller of a dynamic quorum the directory id of
// its folder, which names it in the voter set beside its id, as Kafka's
// meta.properties does; a wiped folder's new id makes the node come back
// an observer.
func dynamicVoter(cfg *Config) error {
	if err := folderDirectoryID(cfg); err != nil {
		return err
	}
	id := cfg.Raft.Raft.NodeID
	// A standalone controller knows its own directory id, as
	// kafka-storage format --standalone writes it.
	if len(cfg.Raft.BootstrapVoters) == 1 && cfg.Raft.BootstrapVoters[0].ID == id {
		v := cfg.Raft.BootstrapVoters[0]
		if v.DirectoryID.IsZero() {
			v.DirectoryID = cfg.Raft.Raft.DirectoryID
			cfg.Raft.BootstrapVoters = raft.VoterSet{v}
		}
	}
	return nil
}

// JoiningControllerConfig is the Config of controller id joining the
// dynamic quorum (kraft.version 1) of a running cluster: it starts as an
// observer, fetching from the voters it finds through bootstrap (the
// initial controllers, controller.quorum.bootstrap.servers), until an
// AddRaftVoter makes it a voter. Otherwise it is NodeConfig's.
func (s Settings) JoiningControllerConfig(id int32, bootstrap []int32, clusterID, dataDir string) (Config, error) {
	if s.KRaftVersion < int64(raft.KRaftVersion1) {
		return Config{}, fmt.Errorf("node %d: only a dynamic quorum (kraft.version 1) takes controllers at run time", id)
	}
	c, err := s.NodeConfig(id, bootstrap, clusterID, dataDir)
	if err != nil {
		return Config{}, err
	}
	c.Kind = Controller
	c.Raft.BootstrapVoters = nil
	return c, nil
}

// dynamicQuorum turns a static quorum configuration into a dynamic one's:
// no static voters, the initial controllers as bootstrap servers and, on
// one of them, the voter set its empty log starts with. That set names
// each initial controller's directory id, read from (or formatted into)
// its folder under dataDir, as kafka-storage format --initial-controllers
// is given them: every initial controller writes the same set, and one
// whose folder is formatted again is told from the voter it was.
func dynamicQuorum(c *quorum.Config, initial []int32, clusterID, dataDir string) error {
	c.Raft.Voters = nil
	c.Raft.Bootstrap = initial
	c.BootstrapVoters = nil
	if !slices.Contains(initial, c.Raft.NodeID) {
		return nil
	}
	set := raft.StaticVoters(initial)
	for i, v := range set {
		dir, err := directoryID(NodeDir(dataDir, v.ID), clusterID, v.ID)
		if err != nil {
			return fmt.Errorf("initial controller %d: %w", v.ID, err)
		}
		set[i].DirectoryID = raft.DirectoryID(dir)
	}
	c.BootstrapVoters = set
	return nil
}

// ControllerPropertiesFile is the file a controller that joins a dynamic
// quorum gets in its folder: what Kafka's kafka-metadata-quorum
// add-controller reads from the controller's own configuration.
const ControllerPropertiesFile = "controller.properties"

// WriteControllerProperties writes controller id's controller.properties
// into nodeDir and returns its path: the node id and roles, the
// controller listener at addr, and the metadata log folder (nodeDir, whose
// meta.properties holds the directory id the tool sends).
func WriteControllerProperties(nodeDir string, id int32, addr string) (string, error) {
	content := fmt.Sprintf("# kraftlab: controller %d, for kafka-metadata-quorum add-controller --command-config\nprocess.roles=controller\nnode.id=%d\ncontroller.listener.names=CONTROLLER\nlisteners=CONTROLLER://%s\nmetadata.log.dir=%s\n", id, id, addr, nodeDir)
	path := filepath.Join(nodeDir, ControllerPropertiesFile)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("node %d's controller.properties: %w", id, err)
	}
	return path, nil
}
