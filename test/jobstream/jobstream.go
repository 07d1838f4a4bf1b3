// Package jobstream writes streams of job specs of a chosen size, for the
// benchmarks and the checks that need many jobs: an MPIJob (v2beta1), a
// PyTorchJob and a DIJob, in turn, each as its users write it.
package jobstream

import (
	"bytes"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strconv"
)

var (
	//go:embed mpijob.yaml
	mpiJob []byte
	//go:embed pytorchjob.yaml
	pytorchJob []byte
	//go:embed dijob.yaml
	diJob []byte
)

// Mixed returns n jobs, kinds in turn, named job-00000 onwards.
func Mixed(n int) []byte {
	specs := [][]byte{MPIJob("", 2), pytorchJob, diJob}
	docs := make([][]byte, n)
	for i := range n {
		docs[i] = named(specs[i%len(specs)], fmt.Sprintf("job-%05d", i))
	}
	return join(docs)
}

// Shuffled returns the documents of Mixed(n) in an order drawn from seed.
func Shuffled(n int, seed uint64) []byte {
	docs := bytes.Split(Mixed(n), []byte("---\n"))
	rand.New(rand.NewPCG(seed, seed)).Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	return join(docs)
}

// MPIJob returns one MPIJob with the given number of workers, named name
// (or NAME when name is empty, for Mixed to fill in).
func MPIJob(name string, workers int) []byte {
	spec := bytes.Replace(mpiJob, []byte("replicas: WORKERS"), []byte("replicas: "+strconv.Itoa(workers)), 1)
	if name == "" {
		return spec
	}
	return named(spec, name)
}

func named(spec []byte, name string) []byte {
	return bytes.Replace(spec, []byte("name: NAME"), []byte("name: "+name), 1)
}

func join(docs [][]byte) []byte {
	return bytes.Join(docs, []byte("---\n"))
}

// Minimal is the smallest MPIJob that renders, named pi, for tests that
// edit a job into what they need.
const Minimal = `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: launcher
            image: registry.example/app:1
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: registry.example/app:1
`

// AliasBomb is a ConfigMap, named lol, whose aliases expanded would be 9^8
// strings (about 130 MB of "lol"s, far more as trees): the billion laughs.
const AliasBomb = `apiVersion: v1
kind: ConfigMap
metadata:
  name: lol
data:
` + AliasBombEntries

// AliasBombEntries is AliasBomb's data alone, entries indented by two
// spaces, for tests that put the aliases elsewhere.
const AliasBombEntries = `  a: &a "lol"
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`
