// Package podsecurity holds Kubernetes' own Pod Security admission up as
// the oracle of what trainfn adds to the pods it renders: a job whose pod
// templates all meet a level of the Pod Security Standards must render pods
// that meet it too, the containers trainfn adds (kubectl delivery, the
// launcher's waits) included, or a namespace held to that level refuses
// them. For every golden case and example, the strictest level every pod
// template of the input meets is found, and every pod template of the
// expected output is checked against it, with the policy evaluator the API
// server's admission plugin runs (k8s.io/pod-security-admission).
//
// It is a module of its own, as test/trainer-oracle is: the evaluator is
// another project's code used as an oracle, and nothing of it is linked
// into trainfn or enters trainfn's module graph; nor is anything of trainfn
// linked into this test, which reads the reviewed files alone.
package podsecurity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// root is the repository's root, from this module's folder.
const root = "../.."

// levels are the Pod Security Standards' levels, strictest first.
var levels = []api.Level{api.LevelRestricted, api.LevelBaseline, api.LevelPrivileged}

// restrictedCases are golden cases whose every pod template meets
// restricted: without them the sweep would check little beyond baseline,
// which most inputs stop at.
var restrictedCases = []string{
	"render/mpijob/testdata/v2beta1/mpijob-kubectl-exec-restricted",
	"render/mpijob/testdata/v2beta1/mpijob-kubectl-exec-elastic",
	// Progress reporting's projected volume is among those restricted allows.
	"render/mpijob/testdata/v2beta1/progress-restricted",
	"render/trainjob/testdata/v1alpha1/beyond-trainer-kubectl-exec-restricted",
}

// TestGoldenCasesKeepPodSecurity: every golden case that renders pods
// renders them at the level of its input's templates.
func TestGoldenCasesKeepPodSecurity(t *testing.T) {
	o := newOracle(t)
	cases := goldenCases(t)
	if len(cases) < 50 {
		t.Fatalf("only %d golden cases found under %s", len(cases), root)
	}
	for _, dir := range cases {
		name, _ := filepath.Rel(root, dir)
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			// A job spec may be the function config, as kustomize's
			// generators pass it.
			in := readTemplates(t, filepath.Join(dir, "input.yaml"))
			if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
				in = append(in, readTemplates(t, filepath.Join(dir, "config.yaml"))...)
			}
			out := readTemplates(t, filepath.Join(dir, "expected.yaml"))
			if len(in) == 0 && len(out) > 0 {
				t.Fatal("the output has pod templates, the input none to hold them to")
			}
			o.keeps(t, o.strictest(in), out)
		})
	}
}

// TestRestrictedCasesAreRestricted keeps restrictedCases what they are for:
// an input that no longer meets restricted would weaken the sweep unseen.
func TestRestrictedCasesAreRestricted(t *testing.T) {
	o := newOracle(t)
	for _, name := range restrictedCases {
		t.Run(name, func(t *testing.T) {
			in := readTemplates(t, filepath.Join(root, name, "input.yaml"))
			if len(in) == 0 {
				t.Fatal("the input has no pod template")
			}
			for _, tpl := range in {
				if failed := o.failures(api.LevelRestricted, tpl); len(failed) > 0 {
					t.Errorf("%s does not meet restricted: %s", tpl.where, strings.Join(failed, "; "))
				}
			}
		})
	}
}

// renderedExamples are examples' folders of rendered output committed
// beside their inputs: the Flux example's, which its CI writes.
var renderedExamples = []string{"examples/flux/render/deploy"}

// TestExamplesKeepPodSecurity: every example's rendered output renders pods
// at the level every example's input meets. The examples share their
// inputs (examples/jobs, the runtimes, a chart's values), so their level is
// taken over all of them: every YAML file of examples/ but the rendered
// outputs (.expected/output.yaml, renderedExamples).
func TestExamplesKeepPodSecurity(t *testing.T) {
	o := newOracle(t)
	var in []template
	var outputs []string
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rendered := slices.ContainsFunc(renderedExamples, func(dir string) bool {
			return strings.HasPrefix(filepath.ToSlash(rel), dir+"/")
		})
		yamlFile := strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")
		switch {
		case filepath.Base(filepath.Dir(path)) == ".expected":
			if filepath.Base(path) == "output.yaml" {
				outputs = append(outputs, path)
			}
		case rendered && yamlFile:
			outputs = append(outputs, path)
		case yamlFile:
			in = append(in, readTemplates(t, path)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(in) == 0 || len(outputs) == 0 {
		t.Fatalf("examples: %d input templates, %d expected outputs", len(in), len(outputs))
	}
	level := o.strictest(in)
	// The examples' jobs are the operators' own, which meet baseline: a
	// weaker level here would hold the outputs to nothing.
	if level != api.LevelBaseline && level != api.LevelRestricted {
		t.Fatalf("the examples' inputs together meet %q: an example's pod template was made privileged", level)
	}
	for _, output := range outputs {
		name, _ := filepath.Rel(root, output)
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			o.keeps(t, level, readTemplates(t, output))
		})
	}
}

// goldenCases are the folders of the golden cases that render something:
// an input.yaml and an expected.yaml.
func goldenCases(t *testing.T) []string {
	var dirs []string
	for _, pattern := range []string{"render/*/testdata/*/*/expected.yaml", "functions/testdata/*/expected.yaml"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			dir := filepath.Dir(f)
			if _, err := os.Stat(filepath.Join(dir, "input.yaml")); err == nil {
				dirs = append(dirs, dir)
			}
		}
	}
	sort.Strings(dirs)
	return dirs
}

// template is a pod template found in a file: a PodTemplateSpec, or a Pod.
type template struct {
	// where names it: file, object and field path.
	where string
	pod   corev1.PodTemplateSpec
}

// readTemplates finds every pod template of every document of a file:
// whatever mapping has a spec with containers, at any depth, so that the
// operators' replica specs, a TrainJob runtime's replicated jobs and a
// chart's values are read alike. The files are read as YAML 1.2, as trainfn
// reads them: an input's unquoted yes is a string there, which trainfn
// quotes in its output.
func readTemplates(t *testing.T, file string) []template {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	var out []template
	for {
		var obj any
		err := decoder.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		m, _ := obj.(map[string]any)
		rel, _ := filepath.Rel(root, file)
		name := fmt.Sprintf("%s: %v %v", filepath.ToSlash(rel), m["kind"], nested(m, "metadata", "name"))
		walk(t, obj, "", func(path string, tpl map[string]any) {
			raw, err := json.Marshal(tpl)
			if err != nil {
				t.Fatal(err)
			}
			found := template{where: name + " " + strings.TrimPrefix(path, ".")}
			if err := json.Unmarshal(raw, &found.pod); err != nil {
				t.Fatalf("%s: not a pod template: %v", found.where, err)
			}
			out = append(out, found)
		})
	}
}

// walk calls found with every pod template under v and its path.
func walk(t *testing.T, v any, path string, found func(string, map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		if spec, ok := v["spec"].(map[string]any); ok {
			if _, ok := spec["containers"].([]any); ok {
				found(path, v)
				return
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(t, v[k], path+"."+k, found)
		}
	case []any:
		for i, item := range v {
			walk(t, item, fmt.Sprintf("%s[%d]", path, i), found)
		}
	}
}

func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// oracle is the Pod Security admission's evaluator over its default checks,
// with each check also alone, to name the ones a template fails.
type oracle struct {
	all    policy.Evaluator
	checks []namedCheck
}

type namedCheck struct {
	id   policy.CheckID
	eval policy.Evaluator
	// overridden at restricted by a restricted check of the same concern
	// (capabilities, seccomp): the evaluator runs that one instead.
	overridden bool
}

func newOracle(t *testing.T) *oracle {
	all, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &oracle{all: all}
	overrides := map[policy.CheckID]bool{}
	for _, c := range policy.DefaultChecks() {
		for _, id := range c.Versions[len(c.Versions)-1].OverrideCheckIDs {
			overrides[id] = true
		}
	}
	for _, c := range policy.DefaultChecks() {
		e, err := policy.NewEvaluator([]policy.Check{c}, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.checks = append(o.checks, namedCheck{id: c.ID, eval: e, overridden: overrides[c.ID]})
	}
	return o
}

// failures are the checks of a level a template fails, each as
// "ID: reason (detail)"; none when it meets the level.
func (o *oracle) failures(level api.Level, tpl template) []string {
	lv := api.LevelVersion{Level: level, Version: api.LatestVersion()}
	verdict := policy.AggregateCheckResults(o.all.EvaluatePod(lv, &tpl.pod.ObjectMeta, &tpl.pod.Spec))
	if verdict.Allowed {
		return nil
	}
	var named []string
	for _, c := range o.checks {
		if level == api.LevelRestricted && c.overridden {
			continue
		}
		r := policy.AggregateCheckResults(c.eval.EvaluatePod(lv, &tpl.pod.ObjectMeta, &tpl.pod.Spec))
		if !r.Allowed {
			named = append(named, fmt.Sprintf("%s: %s", c.id, r.ForbiddenDetail()))
		}
	}
	if len(named) != len(verdict.ForbiddenReasons) {
		// The checks alone must account for the evaluator's verdict.
		named = append(named, "(the evaluator: "+verdict.ForbiddenDetail()+")")
	}
	return named
}

// strictest is the strictest level every template meets.
func (o *oracle) strictest(templates []template) api.Level {
	for _, level := range levels {
		if !slices.ContainsFunc(templates, func(tpl template) bool { return len(o.failures(level, tpl)) > 0 }) {
			return level
		}
	}
	return api.LevelPrivileged
}

// keeps fails the test for every template that does not meet the level.
func (o *oracle) keeps(t *testing.T, level api.Level, templates []template) {
	t.Helper()
	t.Logf("held to %q, the level of the input: %d pod templates", level, len(templates))
	for _, tpl := range templates {
		if failed := o.failures(level, tpl); len(failed) > 0 {
			t.Errorf("%s does not meet the Pod Security Standard %q, which every pod template of the input meets:\n\t%s",
				tpl.where, level, strings.Join(failed, "\n\t"))
		}
	}
}
