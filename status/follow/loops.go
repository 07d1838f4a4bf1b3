package follow

import (
	"context"
	"encoding/json"

	"github.com/trainfn/trainfn/status"
)

// Find finds the jobs followed, from the objects held.
type Find func(context.Context, status.Lister) ([]status.Job, error)

// Watch calls changed with the jobs whose status changed since it last
// did, the first time with every job found, until ctx ends: what
// `status -w` prints.
func (f *Follower) Watch(ctx context.Context, find Find, changed func([]status.Job) error) error {
	last := map[string]string{}
	for {
		jobs, err := find(ctx, f.Lister())
		if err != nil {
			return err
		}
		var news []status.Job
		for _, j := range jobs {
			k := j.Namespace + "/" + status.Ref(j)
			data, err := json.Marshal(j)
			if err != nil {
				return err
			}
			if last[k] != string(data) {
				last[k] = string(data)
				news = append(news, j)
			}
		}
		if len(news) > 0 {
			if err := changed(news); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.Changed():
		}
	}
}

// Until calls check with the jobs found each time their objects change,
// until it says it is done or fails, or ctx ends (its cause is returned).
func (f *Follower) Until(ctx context.Context, find Find, check func([]status.Job) (done bool, err error)) error {
	for {
		jobs, err := find(ctx, f.Lister())
		if err != nil {
			return err
		}
		if done, err := check(jobs); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-f.Changed():
		}
	}
}
