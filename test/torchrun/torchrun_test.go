//go:build e2e

// Package torchrun runs real torchrun, and PyTorch without it, in network
// namespaces standing in for the pods of rendered PyTorchJobs: each with the
// hostname, hosts and environment the rendered objects give it, running the
// rendered commands, init containers first.
package torchrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/netns"
	"github.com/trainfn/trainfn/test/rendered"
	"github.com/trainfn/trainfn/test/testtool"
)

// trainfn is the binary under test, built once.
var trainfn string

func TestMain(m *testing.M) { os.Exit(testtool.RunWithTrainfn(m, &trainfn)) }

// scenario bounds each scenario, start-up and rendezvous included; one
// takes about ten seconds.
const scenario = 90 * time.Second

func TestStaticMasterAndWorkers(t *testing.T) {
	for _, manifest := range []string{"static.yaml", "static-env.yaml"} {
		t.Run(manifest, func(t *testing.T) {
			out := render(t, manifest)
			c := newCluster(t, out)
			var master *rendered.Pod
			var workers []*rendered.Pod
			for i := range out.Jobs {
				job := &out.Jobs[i]
				switch job.Labels[handoff.JobRoleLabel] {
				case handoff.RoleMaster:
					master = rendered.Pods(job)[0]
				case handoff.RoleWorker:
					workers = append(workers, rendered.Pods(job)...)
				}
			}
			require.NotNil(t, master)
			require.Len(t, workers, 2)

			// Workers go first, and must wait for the master to resolve.
			var procs []*process
			for _, w := range workers {
				procs = append(procs, c.start(w))
			}
			time.Sleep(3 * time.Second)
			for _, p := range procs {
				require.False(t, p.initialised(), "%s started before the master resolved:\n%s", p.pod.Hostname, p.output())
			}
			procs = append([]*process{c.start(master)}, procs...)

			for rank, p := range procs {
				p.wait(t)
				lines := p.reports(t)
				require.Len(t, lines, 1, p.output())
				assert.Equal(t, report{host: p.pod.Hostname, rank: rank, world: 3, sum: 6}, lines[0],
					"the master has rank 0, worker i rank i+1")
			}
		})
	}
}

func TestElasticAdmitsAThirdWorker(t *testing.T) {
	out := render(t, "elastic.yaml")
	c := newCluster(t, out)
	require.Len(t, out.Jobs, 1, "an elastic job without a master is one Indexed Job")
	job := &out.Jobs[0]
	pods := rendered.Pods(job)
	require.Len(t, pods, 2)

	var procs []*process
	for _, p := range pods {
		procs = append(procs, c.start(p))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range procs {
				t.Logf("pod %s:\n%s", p.pod.Hostname, p.output())
			}
		}
	})
	for _, p := range procs {
		p.waitFor(t, func(rs []report) bool { return len(rs) > 0 && rs[len(rs)-1].world == 2 }, "a group of 2")
	}

	// What a scale-up does: the Job's next index, from the same template.
	procs = append(procs, c.start(rendered.PodOf(job, 2)))
	for _, p := range procs {
		p.wait(t)
		rs := p.reports(t)
		last := rs[len(rs)-1]
		assert.Equal(t, 3, last.world, p.output())
		assert.Equal(t, 6, last.sum, p.output())
	}
}

func TestStandaloneTrainsOnOnePod(t *testing.T) {
	out := render(t, "standalone.yaml")
	c := newCluster(t, out)
	require.Len(t, out.Jobs, 1)
	pods := rendered.Pods(&out.Jobs[0])
	require.Len(t, pods, 1)
	p := c.start(pods[0])
	p.wait(t)
	lines := p.reports(t)
	require.Len(t, lines, 2, p.output())
	for rank, r := range lines {
		assert.Equal(t, report{host: pods[0].Hostname, rank: r.rank, world: 2, sum: 3}, r, "the pod's two processes are the whole world")
		assert.Contains(t, []int{0, 1}, r.rank, "rank %d", rank)
	}
	assert.NotEqual(t, lines[0].rank, lines[1].rank)
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

// cluster stands in for the cluster the output is applied to: it starts
// pods, and keeps every pod's hosts file to what cluster DNS would answer.
type cluster struct {
	t   *testing.T
	out *rendered.Output
	net *netns.Network
	// image is the stand-in image's environment: Debian's torchrun, and a
	// home and temporary folder that end with the test. Its working
	// directory holds the script.
	image []string
	dir   string

	mu      sync.Mutex
	started map[*rendered.Pod]*netns.Pod
	running map[*rendered.Pod]string
}

func newCluster(t *testing.T, out *rendered.Output) *cluster {
	if _, err := os.Stat("/usr/bin/torchrun"); err != nil {
		if os.Getenv(testtool.RequireEnv) != "" {
			t.Fatal("torchrun is missing: run hack/tools.sh e2e")
		}
		t.Skip("torchrun is missing: run hack/tools.sh e2e")
	}
	dir, err := filepath.Abs("testdata")
	require.NoError(t, err)
	home := t.TempDir()
	return &cluster{t: t, out: out, net: netns.New(t), dir: dir,
		image:   []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home},
		started: map[*rendered.Pod]*netns.Pod{}, running: map[*rendered.Pod]string{}}
}

// start runs a pod: its init containers one after the other, then its
// containers (here: the one named pytorch). Once the init containers are
// done the pod is ready, and the names cluster DNS gives it resolve.
func (c *cluster) start(pod *rendered.Pod) *process {
	c.t.Helper()
	np := c.net.Pod(pod.Hostname)
	c.mu.Lock()
	c.started[pod] = np
	err := c.refreshLocked()
	c.mu.Unlock()
	require.NoError(c.t, err)

	p := &process{pod: pod, done: make(chan struct{}), ready: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), scenario)
	c.t.Cleanup(func() {
		cancel()
		<-p.done
	})
	var steps []*exec.Cmd
	for _, container := range append(pod.Spec.InitContainers, pod.Container(c.t, "pytorch")) {
		env := pod.Env(c.t, container, c.image)
		cmd := np.Command(ctx, pod.Argv(c.t, container, env)...)
		cmd.Env, cmd.Dir = env, c.dir
		cmd.Stdout, cmd.Stderr = &p.out, &p.out
		steps = append(steps, cmd)
	}
	go func() {
		defer close(p.done)
		for i, cmd := range steps {
			if i == len(steps)-1 {
				c.mu.Lock()
				c.running[pod] = np.IP
				err := c.refreshLocked()
				c.mu.Unlock()
				close(p.ready)
				if err != nil {
					p.err = err
					return
				}
			}
			if err := cmd.Run(); err != nil {
				p.err = fmt.Errorf("%s: %w", cmd.Args, err)
				return
			}
		}
	}()
	return p
}

// refreshLocked rewrites every started pod's hosts file.
func (c *cluster) refreshLocked() error {
	for pod, np := range c.started {
		if err := np.SetHosts(c.out.Hosts(pod, np.IP, c.running)); err != nil {
			return err
		}
	}
	return nil
}

// process is a running stand-in pod.
type process struct {
	pod   *rendered.Pod
	out   testtool.Buffer
	done  chan struct{}
	ready chan struct{}
	err   error
}

func (p *process) initialised() bool {
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}

func (p *process) output() string { return p.out.String() }

// wait waits for the pod's program to end, and requires it to succeed.
func (p *process) wait(t *testing.T) {
	t.Helper()
	<-p.done
	require.NoError(t, p.err, "pod %s:\n%s", p.pod.Hostname, p.output())
}

// waitFor waits until the pod's reports satisfy ok.
func (p *process) waitFor(t *testing.T, ok func([]report) bool, what string) {
	t.Helper()
	for {
		if ok(p.reports(t)) {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("pod %s ended before %s (%v):\n%s", p.pod.Hostname, what, p.err, p.output())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// report is what allreduce.py prints.
type report struct {
	host             string
	rank, world, sum int
}

var reportLine = regexp.MustCompile(`host=(\S+) rank=(\d+) world=(\d+) sum=(\d+)`)

func (p *process) reports(t *testing.T) []report {
	var rs []report
	for _, m := range reportLine.FindAllStringSubmatch(p.output(), -1) {
		r := report{host: m[1]}
		for i, v := range []*int{&r.rank, &r.world, &r.sum} {
			n, err := strconv.Atoi(m[i+2])
			require.NoError(t, err)
			*v = n
		}
		rs = append(rs, r)
	}
	return rs
}
