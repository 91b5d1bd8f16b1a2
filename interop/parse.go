package interop

import (
	"strings"
	"unicode"
)

// ParseStatus reads `describe --status` output (Kafka's or kraftlab's):
// "Key:<spaces>value" lines, in order. Other lines are ignored.
func ParseStatus(s string) (keys []string, vals map[string]string) {
	vals = map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.ContainsFunc(k, unicode.IsSpace) || !unicode.IsUpper(rune(k[0])) {
			continue
		}
		if _, dup := vals[k]; dup {
			continue
		}
		keys = append(keys, k)
		vals[k] = strings.TrimSpace(v)
	}
	return keys, vals
}

// ParseTable reads a table whose columns are left-aligned under their
// header words (both tools' `describe --replication`): the header line is
// the first non-empty line, and a cell runs from its column's start to the
// next column's. Values may hold spaces ("17 ms ago").
func ParseTable(s string) (cols []string, rows []map[string]string) {
	lines := strings.Split(s, "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return nil, nil
	}
	header := lines[i]
	if strings.Contains(header, "\t") { // Kafka's tables: tab-separated, padded cells
		for _, c := range strings.Split(header, "\t") {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, c)
			}
		}
		for _, line := range lines[i+1:] {
			if strings.TrimSpace(line) == "" {
				break
			}
			row := map[string]string{}
			for c, cell := range strings.Split(line, "\t") {
				if c < len(cols) {
					row[cols[c]] = strings.TrimSpace(cell)
				}
			}
			rows = append(rows, row)
		}
		return cols, rows
	}
	var starts []int
	for j := 0; j < len(header); j++ {
		if header[j] != ' ' && (j == 0 || header[j-1] == ' ') {
			starts = append(starts, j)
		}
	}
	for _, st := range starts {
		end := strings.IndexByte(header[st:], ' ')
		if end < 0 {
			end = len(header) - st
		}
		cols = append(cols, header[st:st+end])
	}
	for _, line := range lines[i+1:] {
		if strings.TrimSpace(line) == "" {
			break
		}
		row := map[string]string{}
		for c, st := range starts {
			end := len(line)
			if c+1 < len(starts) && starts[c+1] < end {
				end = starts[c+1]
			}
			if st < len(line) {
				row[cols[c]] = strings.TrimSpace(line[st:end])
			} else {
				row[cols[c]] = ""
			}
		}
		rows = append(rows, row)
	}
	return cols, rows
}
