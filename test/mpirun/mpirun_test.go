//go:build e2e

// Package mpirun runs real mpirun, Open MPI's and MPICH's, over the SSH
// set-up trainfn renders for MPIJobs. A launcher and three workers are
// network namespaces standing in for the rendered pods: each with the
// hostname, hosts, user, environment and command its Job gives it, and, in
// mount namespaces of its own, exactly the volumes it mounts (the job's
// ConfigMap at /etc/mpi, the SSH Secret at sshAuthMountPath) over the files
// of a stand-in image (image_test.go says what the image provides; none of
// it is trainfn's). The launcher runs its container, which waits for the
// workers, runs mpirun, which starts a small C program on the workers through
// their sshd or rshd, and then tells one worker that the job ended.
package mpirun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/rendered"
	"github.com/trainfn/trainfn/test/testtool"
)

// trainfn is the binary under test, built once.
var trainfn string

func TestMain(m *testing.M) { os.Exit(testtool.RunWithTrainfn(m, &trainfn)) }

// scenario bounds each scenario, so that a hang fails it; one takes a second
// or two, the one with a late worker about eight.
const scenario = 90 * time.Second

// lateBy is how long after the launcher's container began the late
// worker's pod starts: long enough for its wait to have tried it and be
// waiting.
const lateBy = 5 * time.Second

func TestMPIRun(t *testing.T) {
	for _, tt := range []struct {
		manifest string
		// mpi is the implementation the image ships, by Debian's suffix.
		mpi string
		// late is a worker whose pod starts only after the launcher's
		// container began, or -1.
		late int
		// shell is the remote shell mpirun reaches the workers with, as
		// the launcher's wait names it.
		shell string
		// ends says whether the job's cleanPodPolicy (Running or All,
		// said or defaulted) has the launcher tell a worker that the job
		// ended; under None the workers run on.
		ends bool
	}{
		{"openmpi.yaml", "openmpi", 1, "SSH", false},
		{"mpich.yaml", "mpich", -1, "SSH", true},
		{"openmpi-user.yaml", "openmpi", -1, "SSH", true},
		{"mpich-user.yaml", "mpich", -1, "SSH", false},
		// The design's one template, whose command is mpirun: the workers
		// serve SSH instead of running it. v1alpha1 defaults to All.
		{"openmpi-v1alpha1.yaml", "openmpi", -1, "SSH", true},
		// The Rsh launch mode: rsh servers, no key.
		{"openmpi-rsh.yaml", "openmpi", 2, "rsh", false},
		{"mpich-rsh.yaml", "mpich", -1, "rsh", true},
	} {
		t.Run(strings.TrimSuffix(tt.manifest, ".yaml"), func(t *testing.T) {
			began := time.Now()
			runJob(t, tt.manifest, tt.mpi, tt.late, tt.shell, tt.ends)
			t.Logf("scenario took %s", time.Since(began).Round(100*time.Millisecond))
		})
	}
}

// runJob stands up the job's pods, runs its launcher and checks what
// mpirun's ranks report.
func runJob(t *testing.T, manifest, mpi string, late int, shell string, ends bool) {
	ctx, cancel := context.WithTimeout(context.Background(), scenario)
	defer cancel()
	name, slots, apiVersion := readJob(t, manifest)
	out := render(t, manifest)
	c := newCluster(t, ctx, out, mpi, name)
	if shell == "rsh" {
		c.image.addRsh(t)
	}

	var launcher *rendered.Pod
	var workers []*rendered.Pod
	for i := range out.Jobs {
		job := &out.Jobs[i]
		switch job.Labels[handoff.JobRoleLabel] {
		case handoff.RoleLauncher:
			launcher = rendered.Pods(job)[0]
		case handoff.RoleWorker:
			workers = rendered.Pods(job)
		}
	}
	require.NotNil(t, launcher)
	require.Len(t, workers, 3)
	main := launcher.Spec.Containers[0].Name

	for i, w := range workers {
		if i != late {
			c.startWorker(w)
		}
	}
	// The launcher's init containers, if any, run in turn; then its own
	// container, whose command trainfn runs through launch.sh: the wait for
	// workers, which must hold mpirun back until every worker, however
	// late, accepts the remote shell; mpirun; then the word to one worker
	// that the job ended. Its name resolves from the start, as the
	// Service publishes addresses that are not ready.
	l := c.start(launcher)
	c.ready(l)
	for _, init := range launcher.Spec.InitContainers {
		step := c.run(l, init.Name, nil)
		require.NoError(t, c.await(step), "%s:\n%s", init.Name, step.output())
	}

	// Horovod's discovery contract, run as `kubectl exec` would in the
	// launcher's main container: executable as it is mounted, one line per
	// worker, in index order, in the format of the apiVersion's operator:
	// the host alone for mpi-operator v2, host:slots for the others.
	discover := c.run(l, main, []string{"/etc/mpi/discover_hosts.sh"})
	require.NoError(t, c.await(discover), discover.output())
	var want strings.Builder
	for _, w := range workers {
		if apiVersion == "kubeflow.org/v2beta1" {
			fmt.Fprintf(&want, "%s\n", host(w))
		} else {
			fmt.Fprintf(&want, "%s:%d\n", host(w), slots)
		}
	}
	assert.Equal(t, want.String(), discover.output())

	launch := c.run(l, main, nil)
	if late >= 0 {
		time.Sleep(lateBy)
		require.False(t, launch.finished(), "the launcher ended before worker %d started:\n%s", late, launch.output())
		require.NotRegexp(t, report, launch.output(), "mpirun ran before worker %d started", late)
		assert.Contains(t, launch.output(), "trainfn: waiting for "+host(workers[late])+" (",
			"the launcher said it was waiting for the late worker")
		c.startWorker(workers[late])
	}
	require.NoError(t, c.awaitLauncher(launch), "the launcher:\n%s", launch.output())
	t.Logf("the launcher:\n%s", strings.TrimSpace(launch.output()))
	for _, w := range workers {
		assert.Contains(t, launch.output(), "trainfn: "+host(w)+" accepts "+shell+"\n")
	}
	w := workers[0]
	checkRanks(t, launch.output(), workers, slots, c.image.user(t, w.Spec, w.Spec.Containers[0]).uid)
	if ends {
		c.checkToldEnded(launch.output())
	} else {
		c.checkToldNothing(launch.output())
	}
	if shell == "SSH" {
		// The launcher's sessions to a worker (its wait's, mpirun's, its
		// word at the end) share one connection, through the ssh
		// configuration it finds in its ~/.ssh: sshd logs it in once.
		for _, w := range c.workers {
			assert.Equal(t, 1, strings.Count(w.output(), "Accepted publickey"), "%s's sshd logged the launcher in more than once:\n%s", w.pod.Hostname, w.output())
		}
	}
}

// host is a worker's name in the hostfile: the pod's hostname under the
// job's headless Service.
func host(p *rendered.Pod) string { return p.Hostname + "." + p.Subdomain }

// report is a line of testdata/hello.c.
var report = regexp.MustCompile(`(?m)^rank=(\d+) size=(\d+) sum=(\d+) uid=(\d+) host=(\S+)$`)

// checkRanks requires every rank to have reported, in a world of every
// worker's slots, as the workers' user, and each worker to have run its
// slots' ranks.
func checkRanks(t *testing.T, out string, workers []*rendered.Pod, slots, uid int) {
	t.Helper()
	size := len(workers) * slots
	ranks := map[int]bool{}
	perHost := map[string]int{}
	for _, m := range report.FindAllStringSubmatch(out, -1) {
		n := make([]int, 4)
		for i := range n {
			var err error
			n[i], err = strconv.Atoi(m[i+1])
			require.NoError(t, err)
		}
		assert.Equal(t, []int{size, size, uid}, n[1:], "size, all-reduced sum and uid of rank %d", n[0])
		assert.False(t, ranks[n[0]], "rank %d reported twice", n[0])
		ranks[n[0]] = true
		perHost[m[5]]++
	}
	for rank := range size {
		assert.True(t, ranks[rank], "rank %d did not report:\n%s", rank, out)
	}
	want := map[string]int{}
	for _, w := range workers {
		want[w.Hostname] = slots
	}
	assert.Equal(t, want, perHost, "ranks per host")
}

// render runs trainfn on a manifest of testdata.
func render(t *testing.T, manifest string) *rendered.Output {
	t.Helper()
	cmd := exec.Command(trainfn, "render", filepath.Join("testdata", manifest))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	if stderr.Len() > 0 {
		t.Logf("trainfn says:\n%s", stderr.String())
	}
	return rendered.Parse(t, stdout.Bytes())
}
