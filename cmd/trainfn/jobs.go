package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/trainfn/trainfn/kubeclient"
	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/follow"
)

// jobFlags are what status and wait share: kubectl's connection flags,
// -A and -l.
type jobFlags struct {
	conn          kubeclient.Flags
	allNamespaces bool
	selector      string
}

func (f *jobFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	f.conn.Bind(fs)
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "List the jobs of every namespace")
	fs.StringVarP(&f.selector, "selector", "l", "", "Label selector of the jobs (on their Jobs and StatefulSets), as kubectl's: -l team=nlp,tier!=test")
	cmd.MarkFlagsMutuallyExclusive("namespace", "all-namespaces")
	_ = cmd.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		raw, err := f.conn.Loader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return slices.Sorted(maps.Keys(raw.Contexts)), cobra.ShellCompDirectiveNoFileComp
	})
}

// jobSource is where the commands read jobs from, resolved from the flags.
type jobSource struct {
	lister    status.Lister
	namespace string
	selector  labels.Selector
	connect   func(ctx context.Context) (*follow.Follower, error)
}

// source connects as the flags say. refs are the jobs named, which -A
// cannot find: a job's name is unique in its namespace only.
func (f *jobFlags) source(stderr io.Writer, refs []string) (*jobSource, error) {
	if f.allNamespaces && len(refs) > 0 {
		return nil, usageError{"a job is found by name in one namespace: give -n, not -A"}
	}
	selector, err := labels.Parse(f.selector)
	if err != nil {
		return nil, usageError{fmt.Sprintf("-l %q: %v", f.selector, err)}
	}
	config, namespace, err := f.conn.Config()
	if err != nil {
		return nil, err
	}
	if f.allNamespaces {
		namespace = ""
	}
	c, err := status.NewClient(config, stderr)
	if err != nil {
		return nil, err
	}
	return &jobSource{
		lister: status.Selecting(c, selector), namespace: namespace, selector: selector,
		connect: func(ctx context.Context) (*follow.Follower, error) {
			return follow.Start(ctx, config, namespace, stderr)
		},
	}, nil
}

// find reads the jobs named, or every job.
func (s *jobSource) find(refs []string) follow.Find {
	return func(ctx context.Context, l status.Lister) ([]status.Job, error) {
		l = status.Selecting(l, s.selector)
		if len(refs) == 0 {
			return status.List(ctx, l, s.namespace)
		}
		jobs := make([]status.Job, 0, len(refs))
		for _, ref := range refs {
			j, err := status.Get(ctx, l, s.namespace, status.ParseRef(ref))
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, j)
		}
		return jobs, nil
	}
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// fail writes err, if any, and gives the exit status it calls for: 2 for a
// mistake in the command line, else 1.
func fail(stderr io.Writer, err error) error {
	if err == nil {
		return nil
	}
	fmt.Fprintln(stderr, "trainfn:", err)
	if errors.As(err, new(usageError)) {
		return exitError(2)
	}
	return exitError(1)
}

// jobNames completes job names (KIND/NAME where two kinds share one) from
// the cluster the flags given so far reach.
func jobNames(jf *jobFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		src, err := jf.source(io.Discard, nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		jobs, err := src.find(nil)(ctx, src.lister)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := map[string]int{}
		for _, j := range jobs {
			names[j.Name]++
		}
		var out []string
		for _, j := range jobs {
			if names[j.Name] > 1 {
				out = append(out, status.Ref(j))
			} else {
				out = append(out, j.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
