package partition

import "fmt"

// SetMinInsyncReplicas changes min.insync.replicas while the replica is
// open, as a topic's dynamic config change reaches Kafka's Partition at
// once: the next acks=-1 produce, and the next check of one waiting in
// purgatory, use it. Zero means DefaultMinInsyncReplicas.
func (p *Partition) SetMinInsyncReplicas(n int) error {
	if n < 0 {
		return fmt.Errorf("partition %s: min.insync.replicas %d is negative", p.name, n)
	}
	if n == 0 {
		n = DefaultMinInsyncReplicas
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg.MinInsyncReplicas = n
	return nil
}

// MinInsyncReplicas is the replica's min.insync.replicas.
func (p *Partition) MinInsyncReplicas() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.MinInsyncReplicas
}
