// Command recordgen writes package record's record types and their codec
// (records_gen.go, codec_gen.go, json_gen.go) from the schema table in
// records.go. metadata/record's go:generate runs it in that directory:
//
//	go generate ./metadata/record/
//
// With -dir it writes elsewhere, as its test does to compare.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	dir := flag.String("dir", ".", "the directory to write the generated files to")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "recordgen:", err)
		os.Exit(1)
	}
}

// write generates the files into dir and returns their names.
func write(dir string) error {
	files, err := generate(records, structs)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
