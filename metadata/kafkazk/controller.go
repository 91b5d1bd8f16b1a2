package kafkazk

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// Seat is what a controller holds once elected: its epoch and the
// zkVersion of /controller_epoch that fences its writes.
type Seat struct {
	Epoch          int32
	EpochZkVersion int32
}

// Controller is the active controller's id, ok false if there is none,
// and a watch that fires once when /controller is created, changed or
// deleted.
func (c *Client) Controller() (id int32, ok bool, watch <-chan zk.Event, err error) {
	exists, _, w, err := c.conn.ExistsW(ControllerPath)
	if err != nil {
		return 0, false, nil, fmt.Errorf("watch %s: %w", ControllerPath, err)
	}
	if !exists {
		return -1, false, w, nil
	}
	data, _, err := c.conn.Get(ControllerPath)
	if errors.Is(err, zk.ErrNoNode) {
		return -1, false, w, nil
	}
	if err != nil {
		return 0, false, nil, fmt.Errorf("read %s: %w", ControllerPath, err)
	}
	id, err = DecodeController(data)
	return id, err == nil, w, err
}

// ControllerEpoch is the current controller epoch and its zkVersion; 0
// and -1 before any controller was elected (the znode does not exist).
func (c *Client) ControllerEpoch() (Seat, error) {
	data, stat, err := c.conn.Get(ControllerEpochPath)
	if errors.Is(err, zk.ErrNoNode) {
		return Seat{Epoch: 0, EpochZkVersion: -1}, nil
	}
	if err != nil {
		return Seat{}, fmt.Errorf("read %s: %w", ControllerEpochPath, err)
	}
	epoch, err := DecodeControllerEpoch(data)
	return Seat{Epoch: epoch, EpochZkVersion: stat.Version}, err
}

// ErrNotElected says another broker holds /controller.
var ErrNotElected = errors.New("another broker is the controller")

// Elect tries to make broker id the controller: in one multi-op it
// creates the ephemeral /controller and bumps /controller_epoch from the
// epoch it read, conditional on that epoch's zkVersion
// (KafkaZkClient.registerControllerAndIncrementControllerEpoch). It fails
// with ErrNotElected if another broker won, and ErrControllerMoved if the
// epoch moved between the read and the write.
func (c *Client) Elect(id int32, now time.Time) (Seat, error) {
	cur, err := c.ControllerEpoch()
	if err != nil {
		return Seat{}, err
	}
	if cur.EpochZkVersion < 0 {
		// The first controller ever creates the epoch at 0; the race
		// between two first controllers is settled by this create.
		_, err := c.conn.Create(ControllerEpochPath, EncodeControllerEpoch(0), 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return Seat{}, fmt.Errorf("create %s: %w", ControllerEpochPath, err)
		}
		if cur, err = c.ControllerEpoch(); err != nil {
			return Seat{}, err
		}
	}
	next := cur.Epoch + 1
	if cur.Epoch == 1<<31-1 {
		return Seat{}, fmt.Errorf("%s is at its maximum %d", ControllerEpochPath, cur.Epoch)
	}
	resp, err := c.conn.Multi(
		&zk.CreateRequest{Path: ControllerPath, Data: EncodeController(id, now), Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagEphemeral},
		&zk.SetDataRequest{Path: ControllerEpochPath, Data: EncodeControllerEpoch(next), Version: cur.EpochZkVersion},
	)
	switch {
	case errors.Is(err, zk.ErrNodeExists):
		return Seat{}, ErrNotElected
	case errors.Is(err, zk.ErrBadVersion):
		return Seat{}, ErrControllerMoved
	case err != nil:
		return Seat{}, fmt.Errorf("elect broker %d: %w", id, err)
	}
	return Seat{Epoch: next, EpochZkVersion: resp[1].Stat.Version}, nil
}

// Resign deletes /controller if this session holds it, so that the
// brokers elect again at once (a controller that stops cleanly).
func (c *Client) Resign() error {
	_, stat, err := c.conn.Get(ControllerPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", ControllerPath, err)
	}
	if stat.EphemeralOwner != c.conn.SessionID() {
		return nil
	}
	if err := c.conn.Delete(ControllerPath, stat.Version); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete %s: %w", ControllerPath, err)
	}
	return nil
}

// fenced runs ops in one multi-op behind a check that the controller
// epoch is still seat's; a newer controller makes it ErrControllerMoved.
// The check is the first op, so each op's response is at index+1.
func (c *Client) fenced(seat Seat, ops ...any) ([]zk.MultiResponse, error) {
	all := append([]any{&zk.CheckVersionRequest{Path: ControllerEpochPath, Version: seat.EpochZkVersion}}, ops...)
	resp, err := c.conn.Multi(all...)
	if err != nil {
		if len(resp) > 0 && errors.Is(resp[0].Error, zk.ErrBadVersion) {
			return nil, ErrControllerMoved
		}
		return resp, err
	}
	return resp, nil
}
