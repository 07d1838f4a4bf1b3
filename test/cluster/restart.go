package cluster

import (
	"context"
	"errors"
	"os"
	"slices"
	"time"
)

// RestartAPIServer stops kube-apiserver and starts it again with the same
// flags, so on the same address, certificate and etcd data: every client's
// connections and watches break and must be made again, as when a control
// plane node is upgraded or crashes. It returns once the new server is
// ready. Nothing else may wait on the cluster meanwhile (Namespace, say):
// seeing the old server exit, it would give up.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.Restart("kube-apiserver", 5*time.Second); err != nil {
		return err
	}
	return c.Wait(ctx, "kube-apiserver, restarted", 2*time.Minute, func(ctx context.Context) error {
		return c.Client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	})
}

// Restart stops a running component, given the grace period, and starts it
// again with the same flags; it does not wait for it to be ready.
func (c *Cluster) Restart(name string, grace time.Duration) error {
	i := c.proc(name)
	if i < 0 {
		return errors.New(name + " is not running")
	}
	old := c.procs[i]
	// An API server's shutdown is over in moments, but the process
	// lingers while clients hold watches open; they lose them either way.
	old.stop(grace)
	// start truncates the log; what the old process said may explain a
	// failure after the restart.
	_ = os.Rename(old.log, old.log+".before-restart")
	p, err := start(c.Dir, old.name, old.cmd.Path, c.detach, old.cmd.Args[1:]...)
	if err != nil {
		return err
	}
	c.procs[i] = p
	return nil
}

// proc is the index of a running component in c.procs, or -1.
func (c *Cluster) proc(name string) int {
	return slices.IndexFunc(c.procs, func(p *process) bool { return p.name == name })
}

// StopOne stops one running component, or does nothing if none has that
// name; the others go on.
func (c *Cluster) StopOne(name string, grace time.Duration) {
	if i := c.proc(name); i >= 0 {
		c.procs[i].stop(grace)
		c.procs = slices.Delete(c.procs, i, i+1)
	}
}

// KillOne kills one running component at once, as a machine's crash would,
// or does nothing if none has that name; the others go on.
func (c *Cluster) KillOne(name string) {
	if i := c.proc(name); i >= 0 {
		c.procs[i].stop(0)
		c.procs = slices.Delete(c.procs, i, i+1)
	}
}
