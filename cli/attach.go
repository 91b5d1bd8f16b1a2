package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kraftlab/kraftlab/cluster/attach"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The flags that point a read-only command at a real Kafka cluster
// instead of a playground, named as Kafka's tools name them.
const (
	flagBootstrap           = "bootstrap-server"
	flagBootstrapController = "bootstrap-controller"
	flagCommandConfig       = "command-config"
)

// attachHelp is the part of a command's help about attaching.
const attachHelp = `

With --bootstrap-server (or --bootstrap) HOST:PORT[,...] (brokers) or
--bootstrap-controller HOST:PORT[,...] (controllers, each then asked
itself) it reads a real Apache Kafka KRaft cluster instead of a
playground, read-only,
over Kafka's own requests (DescribeQuorum, DescribeCluster, Metadata,
DescribeTopicPartitions, ListOffsets). --command-config FILE takes a client
properties file for SASL (PLAIN, SCRAM) and TLS (PEM stores). What Kafka
shows only through JMX is left out, and named in the view's "attached"
(status --json).`

// addAttachFlags lets cmd read a real cluster.
func addAttachFlags(cmd *cobra.Command) {
	cmd.Flags().StringSlice(flagBootstrap, nil, "read this real Kafka cluster's brokers (HOST:PORT,...) instead of a playground")
	cmd.Flags().StringSlice(flagBootstrapController, nil, "read this real Kafka cluster's controllers (HOST:PORT,...) instead of a playground")
	cmd.Flags().String(flagCommandConfig, "", "Kafka client properties for the real cluster: security.protocol, sasl.*, ssl.*")
	// --bootstrap is --bootstrap-server, shorter to type.
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "bootstrap" {
			name = flagBootstrap
		}
		return pflag.NormalizedName(name)
	})
	cmd.Long += attachHelp
}

// attachConfig is the real cluster cmd's flags name; ok is false when
// they name none (or cmd has no such flags).
func attachConfig(cmd *cobra.Command) (cfg attach.Config, ok bool, err error) {
	if cmd.Flags().Lookup(flagBootstrap) == nil {
		return cfg, false, nil
	}
	cfg.Bootstrap, _ = cmd.Flags().GetStringSlice(flagBootstrap)
	cfg.BootstrapController, _ = cmd.Flags().GetStringSlice(flagBootstrapController)
	file, _ := cmd.Flags().GetString(flagCommandConfig)
	if len(cfg.Bootstrap) == 0 && len(cfg.BootstrapController) == 0 {
		if file != "" {
			return cfg, false, usagef("--%s goes with --%s or --%s", flagCommandConfig, flagBootstrap, flagBootstrapController)
		}
		return cfg, false, nil
	}
	if file != "" {
		if cfg.Properties, err = attach.ReadClientProperties(file); err != nil {
			return cfg, false, usagef("--%s: %v", flagCommandConfig, err)
		}
	}
	return cfg, true, nil
}

// dialAttached attaches to the real cluster cfg names.
func dialAttached(ctx context.Context, cfg attach.Config) (*attach.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	c, err := attach.Dial(ctx, cfg)
	if err != nil {
		return nil, usagef("attach: %v", err)
	}
	return c, nil
}

// readOnce is one view of the real cluster cfg names.
func readOnce(ctx context.Context, cfg attach.Config) (view.View, error) {
	c, err := dialAttached(ctx, cfg)
	if err != nil {
		return view.View{}, err
	}
	defer c.Close()
	return c.Status(ctx)
}

// attachedError turns a refused action into one line with exit code 2.
func attachedError(err error) error {
	if errors.Is(err, attach.ErrReadOnly) {
		return usagef("%v", err)
	}
	return usagef("attached cluster: %v", err)
}

// attachedNote is the line read-only screens print below a real
// cluster's tables.
func attachedNote(v *view.View) string {
	a := v.Attached
	if a == nil {
		return ""
	}
	s := "read over the wire from " + strings.Join(append(append([]string{}, a.Bootstrap...), a.BootstrapController...), ",")
	if len(a.Errors) > 0 {
		s += fmt.Sprintf("; not read: %s", strings.Join(a.Errors, "; "))
	}
	return s
}

// viewSource is where wait and the live screen read views again and
// again: a playground's control socket, or a real cluster's polls.
type viewSource interface {
	status(ctx context.Context) (view.View, error)
	Close()
}

type playgroundSource struct{ c *control.Client }

func (s playgroundSource) status(ctx context.Context) (view.View, error) { return status(ctx, s.c) }
func (s playgroundSource) Close()                                        { s.c.Close() }

type attachedSource struct{ c *attach.Cluster }

func (s attachedSource) status(ctx context.Context) (view.View, error) {
	v, err := s.c.Status(ctx)
	if err != nil {
		return v, attachedError(err)
	}
	return v, nil
}
func (s attachedSource) Close() { s.c.Close() }

// viewSource is the source cmd reads: the real cluster its attach flags
// name, or its session's playground.
func (e *env) viewSource(cmd *cobra.Command) (viewSource, error) {
	cfg, ok, err := attachConfig(cmd)
	if err != nil {
		return nil, err
	}
	if ok {
		c, err := dialAttached(cmd.Context(), cfg)
		if err != nil {
			return nil, err
		}
		return attachedSource{c}, nil
	}
	c, err := e.connect(cmd)
	if err != nil {
		return nil, err
	}
	return playgroundSource{c}, nil
}
