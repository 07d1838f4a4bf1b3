package schemas

import (
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/jobstream"
)

// BenchmarkCompile is what a process pays once for each schema package it
// meets a job of.
func BenchmarkCompile(b *testing.B) {
	for _, pkg := range []string{"./kubeflow/v2beta1", "./kubeflow/v1", "./diengine/v2alpha1"} {
		b.Run(pkg[2:], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := compile(cuecontext.New(), pkg, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidate is one job spec of each kind checked against its
// compiled schema: in full, and as a job of a template the validator knows,
// which has only its own fields checked.
func BenchmarkValidate(b *testing.B) {
	v := NewValidator()
	for _, spec := range strings.Split(string(jobstream.Mixed(3)), "---\n") {
		doc := yaml.MustParse(spec)
		s := For(Kind{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()})
		if _, problems := v.Validate(doc, s); problems != nil {
			b.Fatal(problems)
		}
		for _, mode := range []string{"full", "known-template"} {
			b.Run(doc.GetKind()+"/"+doc.GetApiVersion()+"/"+mode, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if mode == "full" {
						v.templates = templates{}
					}
					if _, problems := v.Validate(doc, s); problems != nil {
						b.Fatal(problems)
					}
				}
			})
		}
	}
}
