package cli

import "strings"

// topicConfigs parses create's --config KEY=VALUE flags; a key given twice
// is refused, as kafka-topics refuses it.
func topicConfigs(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(flags))
	for _, kv := range flags {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usagef("bad --config %q: want KEY=VALUE, e.g. --config min.insync.replicas=2", kv)
		}
		if _, dup := out[k]; dup {
			return nil, usagef("--config %s given twice", k)
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}
