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

// effectiveMinIsr is min.insync.replicas capped at the replication factor
// (Kafka's Partition.effectiveMinIsr): nothing stops a topic from asking
// for more in-sync replicas than it has, and Kafka then asks for all of
// them rather than refusing every acks=-1 produce for ever.
func (p *Partition) effectiveMinIsr() int {
	return min(p.cfg.MinInsyncReplicas, max(len(p.replicas), 1))
}

// underMinIsr says whether the committed ISR of the leader is smaller than
// the effective min.insync.replicas (Kafka's Partition.isUnderMinIsr, which
// counts the committed ISR, not the maximal one).
func (p *Partition) underMinIsr() bool {
	return p.role == RoleLeader && len(p.isr.committed) < p.effectiveMinIsr()
}

// minIsrWords names the effective min.insync.replicas for an error, and
// why it is less than the setting when it is.
func (p *Partition) minIsrWords() string {
	if n := p.effectiveMinIsr(); n < p.cfg.MinInsyncReplicas {
		return fmt.Sprintf("min.insync.replicas %d (%d, capped at the replication factor)", n, p.cfg.MinInsyncReplicas)
	}
	return fmt.Sprintf("min.insync.replicas %d", p.cfg.MinInsyncReplicas)
}
