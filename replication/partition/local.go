package partition

import "fmt"

// ReadLocal reads the replica's own log from offset, whatever its role and
// high watermark: whole batches, at most maxBytes but at least the first.
// It is for checks and tools that compare replicas, never for answering a
// fetch (Read does that).
func (p *Partition) ReadLocal(offset int64, maxBytes int) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	raw, err := p.log.Read(offset, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("partition %s: read local log at %d: %w", p.name, offset, err)
	}
	return raw, nil
}
