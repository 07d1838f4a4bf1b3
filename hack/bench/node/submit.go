package main

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/test/cluster"
)

// submission is a way a job's objects reach the API server, the moment
// every figure of the pi example is timed from.
type submission struct {
	name   string
	submit func(ns string, s system) error
}

// Ways of submitting, as -submit names them.
const (
	serverSide = "server-side"
	kubectl    = "kubectl"
	both       = "both"
)

// checkSubmit refuses a -submit that names no way, before anything starts.
func checkSubmit(way string) error {
	if !slices.Contains([]string{serverSide, kubectl, both}, way) {
		return fmt.Errorf("-submit %q: want %s, %s or %s", way, serverSide, kubectl, both)
	}
	return nil
}

// submissions are the ways -submit asks for: a server-side apply an object
// at a time from a client that runs on, as a GitOps controller applies
// (Flux's kustomize-controller; Argo CD with ServerSideApply=true), its
// discovery learnt before; and kubectl apply, a process a job, which
// downloads and reads the OpenAPI document of each group its objects are
// of before it sends any (core/v1's is the largest), as a user at a
// terminal or a CI script pays.
func (b *bench) submissions(way string, systems []system) ([]submission, error) {
	ways := []string{serverSide, kubectl}
	if way != both {
		ways = []string{way}
	}
	var subs []submission
	for _, w := range ways {
		switch w {
		case serverSide:
			applier, err := b.n.NewApplier("trainfn-bench")
			if err != nil {
				return nil, err
			}
			docs := map[string][]*unstructured.Unstructured{}
			for _, s := range systems {
				objs, err := cluster.DecodeObjects(s.objects)
				if err != nil {
					return nil, fmt.Errorf("%s's objects: %w", s.name, err)
				}
				if err := applier.Knows(objs); err != nil {
					return nil, fmt.Errorf("%s: %w", s.name, err)
				}
				docs[s.name] = objs
			}
			subs = append(subs, submission{"server-side apply", func(ns string, s system) error {
				return applier.Apply(b.ctx, ns, docs[s.name])
			}})
		case kubectl:
			subs = append(subs, submission{"kubectl apply", func(ns string, s system) error {
				return b.kubectl(s.objects, "apply", "-n", ns, "-f", "-")
			}})
		}
	}
	return subs, nil
}
