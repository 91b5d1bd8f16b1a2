// Command kraftlab starts an in-process KRaft cluster and lets you watch and
// break its replication. See README.md.
package main

import "github.com/kraftlab/kraftlab/cli"

func main() { cli.Execute() }
