package cluster

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// JobUIDs are the UIDs of the Jobs in a namespace that are not being
// deleted, by name: a Job recreated under its name has another UID.
func (c *Cluster) JobUIDs(t testing.TB, ns string) map[string]types.UID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs, err := c.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing the Jobs of %s: %v", ns, err)
	}
	uids := map[string]types.UID{}
	for _, j := range jobs.Items {
		if j.DeletionTimestamp == nil {
			uids[j.Name] = j.UID
		}
	}
	return uids
}
