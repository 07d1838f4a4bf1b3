package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/waitfor"
)

// completionTimeout bounds the listing shell completion does.
const completionTimeout = 5 * time.Second

// forever is what a negative --timeout means, as in kubectl wait.
const forever = 7 * 24 * time.Hour

func waitCommand(stdout, stderr io.Writer) *cobra.Command {
	var jf jobFlags
	var fors []string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait (JOB | KIND/JOB)... --for=condition=TYPE[=VALUE]",
		Short: "Wait until jobs meet a condition, as kubectl wait waits for an object",
		Long: `wait returns once every job named (or, with -l, every job selected) meets
each --for: condition=TYPE[=VALUE] (a condition of the job's status: Created,
Running, Restarting, Suspended, Succeeded, Failed, and Complete for a
TrainJob; VALUE True by default, both compared in any case), or
jsonpath='{PATH}'[=VALUE] on the job's document as status -o json writes it.
It prints "KIND.GROUP/JOB condition met" for each, as kubectl wait does.

It exits 0 when all are met, and 1 as soon as one cannot be: the job ended
(Succeeded or Failed) without meeting it, with the job's reason; or when
--timeout passes first (30s by default; 0 checks once; a negative one waits a
week), or a job does not exist.`,
		Example: `  # in CI, after the job's objects were applied:
  trainfn wait pi --for=condition=Succeeded --timeout=1h`,
		ValidArgsFunction: jobNames(&jf),
		RunE: func(cmd *cobra.Command, args []string) error {
			conds, err := parseFors(fors)
			if err == nil && len(args) == 0 && jf.selector == "" {
				err = usageError{"name the jobs to wait for, or select them with -l"}
			}
			if err != nil {
				return fail(stderr, err)
			}
			src, err := jf.source(stderr, args)
			if err != nil {
				return fail(stderr, err)
			}
			if timeout < 0 {
				timeout = forever
			}
			var metBy []status.Job
			check := func(jobs []status.Job) (bool, error) {
				ok, err := met(jobs, conds)
				if ok {
					metBy = jobs
				}
				return ok, err
			}
			if timeout == 0 {
				jobs, err := src.find(args)(cmd.Context(), src.lister)
				if err == nil {
					var done bool
					if done, err = check(jobs); err == nil && !done {
						err = errTimedOut
					}
				}
				return fail(stderr, reportWait(stdout, err, args, conds, metBy))
			}
			ctx, cancel := context.WithTimeoutCause(cmd.Context(), timeout, errTimedOut)
			defer cancel()
			f, err := src.connect(ctx)
			if err == nil {
				err = f.Until(ctx, src.find(args), check)
			}
			return fail(stderr, reportWait(stdout, err, args, conds, metBy))
		},
	}
	jf.bind(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&fors, "for", nil, "The condition to wait for: condition=TYPE[=VALUE] or jsonpath='{PATH}'[=VALUE]; repeated, all must hold")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "How long to wait; 0 checks once, a negative value waits a week")
	return cmd
}

var errTimedOut = errors.New("timed out waiting for the condition")

func parseFors(fors []string) ([]waitfor.For, error) {
	if len(fors) == 0 {
		return nil, usageError{"--for is required: condition=TYPE[=VALUE] or jsonpath='{PATH}'[=VALUE]"}
	}
	out := make([]waitfor.For, len(fors))
	for i, s := range fors {
		f, err := waitfor.Parse(s)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		out[i] = f
	}
	return out, nil
}

// metError says that a job can no longer meet a condition.
type metError struct{ ref, why string }

func (e *metError) Error() string { return e.ref + ": " + e.why }

// met tells whether every job meets every condition, and fails as soon as
// one never will.
func met(jobs []status.Job, conds []waitfor.For) (bool, error) {
	all := len(jobs) > 0
	for _, j := range jobs {
		doc, err := status.Object(j)
		if err != nil {
			return false, err
		}
		for _, c := range conds {
			ok, err := c.Met(doc)
			if err != nil {
				return false, err
			}
			if why := waitfor.Never(doc, ok); why != "" {
				return false, &metError{status.Name(j), fmt.Sprintf("%s will not be met: %s", c, why)}
			}
			all = all && ok
		}
	}
	return all, nil
}

// reportWait writes "KIND.GROUP/JOB condition met" for each job, as kubectl wait
// does, or says what timed out.
func reportWait(stdout io.Writer, err error, refs []string, conds []waitfor.For, metBy []status.Job) error {
	if errors.Is(err, errTimedOut) {
		what := strings.Join(refs, ", ")
		if what == "" {
			what = "the jobs selected"
		}
		return fmt.Errorf("timed out waiting for %s on %s", forList(conds), what)
	}
	if err != nil {
		return err
	}
	for _, j := range metBy {
		fmt.Fprintf(stdout, "%s condition met\n", status.Name(j))
	}
	return nil
}

func forList(conds []waitfor.For) string {
	s := make([]string, len(conds))
	for i, c := range conds {
		s[i] = c.String()
	}
	return strings.Join(s, " and ")
}
