//go:build e2e

// Package mpirun runs real mpirun, Open MPI's and MPICH's, over the SSH
// set-up trainfn renders for MPIJobs. A launcher and three workers are
// network namespaces standing in for the rendered pods: each with the
// hostname, hosts, user, environment and command its Job gives it, and, in
// mount namespaces of its own, exactly the volumes it mounts (the job's
// ConfigMap at /etc/mpi, the SSH Secret at sshAuthMountPath) over the files
// of a stand-in image (image_test.go says what the image provides; none of
// it is trainfn's). The launcher runs its init container, then mpirun, which
// starts a small C program on the workers through their sshd.
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

// waitStep is the launcher's init container that trainfn adds.
const waitStep = "wait-for-workers"

// lateBy is how long after the launcher's wait-for-workers step began the
// late worker's pod starts: long enough for the step to have tried it and
// be waiting.
const lateBy = 5 * time.Second

func TestMPIRun(t *testing.T) {
	for _, tt := range []struct {
		manifest string
		// mpi is the implementation the image ships, by Debian's suffix.
		mpi string
		// late is a worker whose pod starts only after the launcher's
		// wait-for-workers step began, or -1.
		late int
		// shell is the remote shell mpirun reaches the workers with, as
		// the wait-for-workers step names it.
		shell string
	}{
		{"openmpi.yaml", "openmpi", 1, "SSH"},
		{"mpich.yaml", "mpich", -1, "SSH"},
		{"openmpi-user.yaml", "openmpi", -1, "SSH"},
		{"mpich-user.yaml", "mpich", -1, "SSH"},
		// The design's one template, whose command is mpirun: the workers
		// serve SSH instead of running it.
		{"openmpi-v1alpha1.yaml", "openmpi", -1, "SSH"},
		// The Rsh launch mode: rsh servers, no key.
		{"openmpi-rsh.yaml", "openmpi", 2, "rsh"},
		{"mpich-rsh.yaml", "mpich", -1, "rsh"},
	} {
		t.Run(strings.TrimSuffix(tt.manifest, ".yaml"), func(t *testing.T) {
			began := time.Now()
			runJob(t, tt.manifest, tt.mpi, tt.late, tt.shell)
			t.Logf("scenario took %s", time.Since(began).Round(100*time.Millisecond))
		})
	}
}

// runJob stands up the job's pods, runs its launcher and checks what
// mpirun's ranks report.
func runJob(t *testing.T, manifest, mpi string, late int, shell string) {
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
	// The launcher's init containers run in turn; the last is trainfn's
	// wait-for-workers, which must hold mpirun back until every worker,
	// however late, accepts SSH.
	l := c.start(launcher)
	var wait *container
	for _, init := range launcher.Spec.InitContainers {
		step := c.run(l, init.Name, nil)
		if init.Name == waitStep {
			wait = step
			if late >= 0 {
				time.Sleep(lateBy)
				require.False(t, wait.finished(), "%s ended before worker %d started:\n%s", waitStep, late, wait.output())
				c.startWorker(workers[late])
			}
		}
		require.NoError(t, c.await(step), "%s:\n%s", init.Name, step.output())
	}
	require.NotNil(t, wait, "the launcher has no init container %s", waitStep)
	t.Logf("%s:\n%s", waitStep, strings.TrimSpace(wait.output()))
	for _, w := range workers {
		assert.Contains(t, wait.output(), "trainfn: "+host(w)+" accepts "+shell+"\n")
	}
	if late >= 0 {
		assert.Contains(t, wait.output(), "trainfn: waiting for "+host(workers[late])+" (",
			"the step said it was waiting for the late worker")
	}
	c.ready(l)

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

	mpirun := c.run(l, main, nil)
	require.NoError(t, c.await(mpirun), "mpirun:\n%s", mpirun.output())
	t.Logf("mpirun:\n%s", strings.TrimSpace(mpirun.output()))
	w := workers[0]
	checkRanks(t, mpirun.output(), workers, slots, c.image.user(t, w.Spec, w.Spec.Containers[0]).uid)
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
