package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/test/node"
)

// steps are the moments of a job's start, each from its submission, as the
// cluster's DNS and the processes themselves report them: what the
// launcher's start is made of.
type steps struct {
	// names: every worker's name resolves in the cluster's DNS.
	names time.Duration
	// sshd: every worker's sshd listens.
	sshd time.Duration
	// answered: every worker's sshd has logged its first login: under
	// trainfn the launcher's wait's, under mpi-operator mpirun's, after
	// ssh's retries a second apart. Later sessions from trainfn's
	// launcher ride on the wait's connection, and log none.
	answered time.Duration
	// printed: the launcher printed pi.
	printed time.Duration
	// said: the launcher's last line, its end but for its exit: under
	// trainfn that it told a worker the job ended, under mpi-operator pi.
	said time.Duration
}

// logLine is a line of a container's log at the kubelet's timestamp.
type logLine struct {
	at   time.Time
	text string
}

// podLogs follows the main container of a namespace's pods from its start
// to its end, each run of it (a launcher whose first attempt failed
// restarts), so that a pod's lines outlive the pod: mpi-operator deletes
// its workers as the job ends.
type podLogs struct {
	ctx       context.Context
	n         *node.Node
	ns        string
	wg        sync.WaitGroup
	mu        sync.Mutex
	logs      map[string][]logLine
	following map[string]bool // by pod and run of its container
}

func newPodLogs(ctx context.Context, n *node.Node, ns string) *podLogs {
	return &podLogs{ctx: ctx, n: n, ns: ns, logs: map[string][]logLine{}, following: map[string]bool{}}
}

// follow starts following p's log, once a run of its container, when the
// run has started.
func (l *podLogs) follow(p *corev1.Pod) {
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting != nil {
		return
	}
	run := fmt.Sprintf("%s/%d", p.Name, p.Status.ContainerStatuses[0].RestartCount)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.following[run] {
		return
	}
	l.following[run] = true
	l.wg.Go(func() {
		stream, err := l.n.Client.CoreV1().Pods(l.ns).GetLogs(p.Name, &corev1.PodLogOptions{
			Container: p.Spec.Containers[0].Name, Follow: true, Timestamps: true,
		}).Stream(l.ctx)
		if err != nil {
			return
		}
		defer func() { _ = stream.Close() }()
		lines := bufio.NewScanner(stream)
		for lines.Scan() {
			stamp, text, _ := strings.Cut(lines.Text(), " ")
			at, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				continue
			}
			l.mu.Lock()
			l.logs[p.Name] = append(l.logs[p.Name], logLine{at, text})
			l.mu.Unlock()
		}
	})
}

// wait waits for the logs followed to end, as their containers do.
func (l *podLogs) wait() { l.wg.Wait() }

// steps reads the moments from the logs, from began.
func (l *podLogs) steps(began time.Time) steps {
	var s steps
	latest := func(d *time.Duration, at time.Time) {
		if !at.IsZero() {
			*d = max(*d, at.Sub(began))
		}
	}
	for pod, lines := range l.logs {
		if strings.Contains(pod, "-launcher") {
			latest(&s.printed, first(lines, "pi is approximately"))
			if len(lines) > 0 {
				latest(&s.said, lines[len(lines)-1].at)
			}
			continue
		}
		latest(&s.sshd, first(lines, "Server listening on"))
		latest(&s.answered, first(lines, "Accepted "))
	}
	return s
}

// first is when the first line that contains text was written; zero if
// none.
func first(lines []logLine, text string) time.Time {
	for _, l := range lines {
		if strings.Contains(l.text, text) {
			return l.at
		}
	}
	return time.Time{}
}

// dns asks the cluster's DNS, as a pod does.
var dns = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, "udp", net.JoinHostPort(node.IP, "53"))
}}

// namesResolved asks the cluster's DNS for every worker's name in turn,
// every poll from began, apart from the loop that reads the pods, which a
// slow answer would hold back; it sends how long after began the last one
// resolved. A name once resolved is not asked again.
func namesResolved(ctx context.Context, ns string, workers []string, began time.Time) <-chan time.Duration {
	resolved := make(chan time.Duration, 1)
	go func() {
		for i := 0; i < len(workers); {
			ask, cancel := context.WithTimeout(ctx, time.Second)
			_, err := dns.LookupHost(ask, workers[i]+"."+ns+".svc."+node.Domain+".")
			cancel()
			if err == nil {
				i++
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(poll):
			}
		}
		resolved <- time.Since(began)
	}()
	return resolved
}
