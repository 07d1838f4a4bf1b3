// Command launch times the launcher's wait for its workers: the rendered
// wait_for_workers.sh, from the moment every worker accepts SSH to the
// moment the script returns, for 100, 1,000 and 10,000 hosts. The script
// runs as rendered, probing its default number of workers at once, and, in
// the same run, one at a time (TRAINFN_WAIT_PARALLEL=1), the baseline it
// is set against.
//
// No machine here runs 10,000 sshd: the workers' ssh is a stand-in on
// PATH that answers after a fixed latency (-latency, 20 ms by default, an
// ssh session's setup on a local network), so what is timed is the
// script's own cost and the probes' concurrency. The render's own tests
// run the script against a real sshd (render/mpi).
//
// Usage: go run ./hack/bench/launch [-hosts 100,1000,10000] [-latency 20ms] [-quick]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
)

// target is the issue's: at most this long at 1,000 hosts.
const (
	targetHosts = 1000
	target      = 2 * time.Second
)

func main() {
	hostCounts := flag.String("hosts", "100,1000,10000", "host counts, comma-separated")
	latency := flag.Duration("latency", 20*time.Millisecond, "how long the stand-in ssh takes to answer")
	quick := flag.Bool("quick", false, "skip the one-at-a-time baseline above 1,000 hosts (it takes minutes)")
	flag.Parse()
	var counts []int
	for _, s := range strings.Split(*hostCounts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "launch: -hosts: %q is not a host count\n", s)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	if err := run(os.Stdout, counts, *latency, *quick); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		os.Exit(1)
	}
}

// row is one host count's figures.
type row struct {
	hosts                int
	parallel, sequential time.Duration
}

func run(out io.Writer, counts []int, latency time.Duration, quick bool) error {
	dir, err := os.MkdirTemp("", "trainfn-launch-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return err
	}
	ssh := fmt.Sprintf("#!/bin/sh\nsleep %.3f\n", latency.Seconds())
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(ssh), 0o755); err != nil {
		return err
	}
	parallel := mpi.DefaultWaitParallel
	fmt.Fprintf(out, "The launcher's wait for its workers (wait_for_workers.sh), every worker accepting SSH from the start;\n")
	fmt.Fprintf(out, "a stand-in ssh answers after %s. Probed %s at a time as rendered, against one at a time.\n\n", latency, parallel)
	var rows []row
	for _, n := range counts {
		hostfile := filepath.Join(dir, fmt.Sprintf("hostfile-%d", n))
		if err := writeHostfile(hostfile, n); err != nil {
			return err
		}
		r := row{hosts: n}
		if r.parallel, err = timeScript(hostfile, bin, ""); err != nil {
			return err
		}
		if !quick || n <= targetHosts {
			if r.sequential, err = timeScript(hostfile, bin, "1"); err != nil {
				return err
			}
		}
		rows = append(rows, r)
	}
	report(out, rows, parallel)
	return nil
}

func writeHostfile(path string, n int) error {
	hosts := make([]handoff.Host, n)
	for i := range hosts {
		hosts[i] = handoff.Host{Name: fmt.Sprintf("bench-worker-%d.bench", i), Slots: 1}
	}
	return os.WriteFile(path, []byte(mpi.Hostfile(mpi.OpenMPI, hosts)), 0o644)
}

// timeScript runs the rendered script over a hostfile with the stand-in
// ssh first on PATH, with parallel probes (the rendered default when
// empty), and returns its wall time.
func timeScript(hostfile, bin, parallel string) (time.Duration, error) {
	script := strings.ReplaceAll(mpi.WaitForWorkers(mpi.OpenMPI), mpi.ConfigDir+"/"+mpi.HostfileKey, hostfile)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	if parallel != "" {
		cmd.Env = append(cmd.Env, mpi.WaitParallelEnv+"="+parallel)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("wait_for_workers.sh: %w: %s", err, stderr.String())
	}
	return took, nil
}

func report(out io.Writer, rows []row, parallel string) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "hosts\tparallel\tper host\tone at a time\tratio\t")
	for _, r := range rows {
		seq, ratio := "not run (-quick)", ""
		if r.sequential > 0 {
			seq = r.sequential.Round(time.Millisecond).String()
			ratio = fmt.Sprintf("%.3fx", r.parallel.Seconds()/r.sequential.Seconds())
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t\n", r.hosts, r.parallel.Round(time.Millisecond),
			(r.parallel / time.Duration(r.hosts)).Round(time.Microsecond), seq, ratio)
	}
	_ = w.Flush()
	fmt.Fprintln(out)
	for i, r := range rows {
		if r.hosts == targetHosts {
			fmt.Fprintf(out, "target: at most %s at %d hosts: %s (%s)\n", target, targetHosts, met(r.parallel <= target), r.parallel.Round(time.Millisecond))
		}
		if i > 0 {
			prev := rows[i-1]
			grew := r.parallel.Seconds() / prev.parallel.Seconds()
			hostsGrew := float64(r.hosts) / float64(prev.hosts)
			fmt.Fprintf(out, "target: from %d to %d hosts (%.0fx), the wait grows no faster than the hosts: %.2fx, %s\n",
				prev.hosts, r.hosts, hostsGrew, grew, met(grew <= hostsGrew))
		}
	}
	fmt.Fprintf(out, "(%s probes at once: the wait is about hosts / %s rounds of one ssh each)\n", parallel, parallel)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
