package metasim

import "fmt"

// check runs after every event: every running node's image is the
// reference replay at the offset it applied, and no two controllers were
// ever active in one epoch.
func (s *Sim) check() error {
	for _, id := range s.rc.IDs() {
		m := s.members[id]
		if m == nil || !m.alive() {
			continue
		}
		if err := m.loader.Err(); err != nil {
			return fmt.Errorf("node %d's loader stopped: %w", id, err)
		}
		img := m.loader.Image()
		if img != m.checked {
			m.checked = img
			off := img.Provenance().LastContainedOffset
			if off >= 0 {
				want, ok := s.ref.imgs[off]
				if !ok {
					return fmt.Errorf("ImageIsReplay: node %d published an image at %d, not the end of a committed batch", id, off)
				}
				if !sameState(img, want) {
					return fmt.Errorf("ImageIsReplay: node %d's image at %d differs from the replay of the committed log", id, off)
				}
			}
		}
		if m.ctl != nil {
			if e, ok := m.ctl.Active(); ok {
				if other, seen := s.active[e]; seen && other != id {
					return fmt.Errorf("SingleActiveController: controllers %d and %d both active in epoch %d", other, id, e)
				}
				if _, seen := s.active[e]; !seen {
					s.active[e] = id
					s.record("controller %d active in epoch %d", id, e)
				}
			}
		}
	}
	if s.opts.Check != nil {
		return s.opts.Check()
	}
	return nil
}
