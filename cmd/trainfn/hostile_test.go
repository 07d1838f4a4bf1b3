package main

// Hostile input to the trainfn binary, run as kustomize, kpt or a user
// runs it: whatever the input, the process ends, in bounded memory, with
// output that is whole or absent (render), or the items as they came with
// the results that say why (KRM function), and with messages, never a Go
// stack trace. functions/hostile*_test.go checks the messages themselves.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/jobstream"
	"github.com/trainfn/trainfn/test/testtool"
)

// trainfnBinary is the trainfn these tests run, built once.
var trainfnBinary string

func TestMain(m *testing.M) { os.Exit(testtool.RunWithTrainfn(m, &trainfnBinary)) }

// processHangGuard bounds every run of the binary. It guards against hangs
// only: the slowest case here takes some seconds on a loaded machine, and
// no assertion is made on time.
const processHangGuard = 5 * time.Minute

// process is what one run of the binary did.
type process struct {
	code           int
	stdout, stderr string
	// peakRSS is the most memory the process held, in bytes; 0 where the
	// platform does not say.
	peakRSS int64
}

// runBinary runs trainfn with stdin read from a file ("" for none) and
// stdout written to one, so that big outputs stay out of the test's own
// memory; stdout is returned only when small.
func runBinary(t *testing.T, stdin string, args ...string) (process, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), processHangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, trainfnBinary, args...)
	if stdin != "" {
		in, err := os.Open(stdin)
		require.NoError(t, err)
		defer in.Close()
		cmd.Stdin = in
	}
	outPath := filepath.Join(t.TempDir(), "stdout")
	out, err := os.Create(outPath)
	require.NoError(t, err)
	defer out.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	lowerOwnPeakRSS()
	err = cmd.Run()
	require.NoError(t, ctx.Err(), "trainfn %v did not end within %s", args, processHangGuard)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	p := process{code: cmd.ProcessState.ExitCode(), stderr: stderr.String(), peakRSS: peakRSS(cmd.ProcessState)}
	if info, err := os.Stat(outPath); err == nil && info.Size() < 1<<20 {
		b, err := os.ReadFile(outPath)
		require.NoError(t, err)
		p.stdout = string(b)
	}
	return p, outPath
}

// requireNoStackTrace checks that stderr holds messages, not a panic.
func requireNoStackTrace(t *testing.T, stderr string) {
	t.Helper()
	for _, trace := range []string{"panic:", "goroutine ", "runtime error", ".go:"} {
		require.NotContains(t, stderr, trace)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// hostileJob is a small MPIJob that renders; cases edit it.
var hostileJob = jobstream.Minimal

// wrapped is documents as the items of a ResourceList.
func wrapped(items ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, item := range items {
		b.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(item), "\n", "\n  ") + "\n")
	}
	return b.String()
}

// hostileInput is a stream trainfn must refuse and what the message must
// say; rl is the same as a ResourceList, when it is more than the stream's
// documents as items, and rlMessage what the function says of it, when it
// says something else.
type hostileInput struct{ name, stream, rl, message, rlMessage string }

func hostileInputs() []hostileInput {
	deep := func(depth int) string {
		return strings.Replace(hostileJob, "spec:\n", "spec:\n  x: "+strings.Repeat("{a: ", depth)+"1"+strings.Repeat("}", depth)+"\n", 1)
	}
	random := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	var env strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&env, "            - {name: VAR_%d, value: v}\n", i)
	}
	cases := []hostileInput{
		{name: "an alias bomb in a job spec",
			stream:  strings.Replace(hostileJob, "  name: pi\n", "  name: pi\n  labels:\n"+strings.ReplaceAll(jobstream.AliasBombEntries, "  ", "    "), 1),
			message: "MPIJob pi: metadata.labels.g: the MPIJob takes more than 1572864 bytes as JSON (YAML aliases expanded)"},
		{name: "a job spec 10000 mappings deep", stream: deep(9_998),
			message: "MPIJob pi: spec.x.a.a.a.a.a.a...: nested more than 100 levels deep"},
		{name: "a job spec 100000 mappings deep", stream: deep(99_998), message: "exceeded max depth of 10000"},
		{name: "random bytes", stream: string(random), rl: string(random), message: "not a YAML file"},
		{name: "NUL bytes", stream: strings.Repeat("\x00", 4096), rl: strings.Repeat("\x00", 4096),
			message: "not a YAML file: the control character U+0000"},
		{name: "invalid UTF-8", stream: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \xff\xfe}\n",
			message: "byte 0xFF is not UTF-8 text"},
		{name: "a scalar document", stream: "just text\n", message: "not a Kubernetes object: the document is not a mapping"},
		{name: "a sequence document", stream: "- - a\n", message: "not a Kubernetes object: the document is not a mapping"},
		{name: "annotations that are a sequence", stream: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: [a]\n",
			message: "not a Kubernetes object: metadata.annotations is not a mapping"},
		{name: "metadata that is an alias, after an object that is fine",
			stream:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Secret\nx: &m {name: z}\nmetadata: *m\n",
			rl:      wrapped("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", "apiVersion: v1\nkind: Secret\nx: &m {name: z}\nmetadata: *m"),
			message: "Secret (unnamed): metadata: a YAML alias (*m)"},
		{name: "duplicate keys", stream: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
			message: `ConfigMap a: metadata.name: mapping key "name" already defined at line`},
		{name: "a ResourceList that gives its items twice", stream: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nkind: Secret\n",
			message:   `ConfigMap a: kind: mapping key "kind" already defined at line 2`,
			rl:        wrapped(hostileJob) + "items: []\n",
			rlMessage: "<stdin>:23:1: error: the ResourceList gives items twice (first at line 3): which one holds what it lists is ambiguous"},
		{name: "100000 environment variables",
			stream:  strings.Replace(hostileJob, "          - name: worker\n", "          - name: worker\n            env:\n"+env.String(), 1),
			message: "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].env: the MPIJob takes more than 1572864 bytes as JSON"},
		{name: "2^63 workers", stream: strings.Replace(hostileJob, "replicas: 2", "replicas: 9223372036854775808", 1),
			message: "spec.mpiReplicaSpecs.Worker.replicas: Invalid value: 9223372036854775808: must fit in a 32-bit integer"},
		{name: "a port out of range", stream: strings.Replace(hostileJob, "          - name: worker\n", "          - name: worker\n            ports: [{containerPort: 70000}]\n", 1),
			message: "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"},
		{name: "a quantity that is none", stream: strings.Replace(hostileJob, "          - name: worker\n", "          - name: worker\n            resources: {limits: {cpu: lots}}\n", 1),
			message: `spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits.cpu: Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{name: "a job named in base64", stream: strings.Replace(hostileJob, "name: pi\n", "name: !!binary cGk=\n", 1),
			message: `MPIJob cGk=: metadata.name: the YAML tag !!binary makes the value base64: kubectl and the API server read "pi"`},
		{name: "a name with a right-to-left override", stream: strings.Replace(hostileJob, "name: pi\n", "name: \"pi\\u202egnp\"\n", 1),
			message: `MPIJob "pi\u202egnp": metadata.name: Invalid value: "pi\u202egnp"`},
	}
	for i, c := range cases {
		if c.rl == "" {
			cases[i].rl = wrapped(c.stream)
		}
	}
	return cases
}

func TestHostileInputFailsCleanly(t *testing.T) {
	for _, c := range hostileInputs() {
		t.Run(c.name, func(t *testing.T) {
			render, _ := runBinary(t, writeFile(t, "input.yaml", c.stream), "render", "-")
			assert.Equal(t, 1, render.code)
			assert.Empty(t, render.stdout, "render prints nothing on error")
			assert.Contains(t, render.stderr, c.message)
			requireNoStackTrace(t, render.stderr)

			krm, _ := runBinary(t, writeFile(t, "rl.yaml", c.rl))
			assert.Equal(t, 1, krm.code)
			assert.Contains(t, krm.stderr, cmp.Or(c.rlMessage, c.message))
			requireNoStackTrace(t, krm.stderr)
			if krm.stdout != "" {
				requireItemsAsTheyCame(t, c.rl, krm.stdout)
			}
		})
	}
}

// requireItemsAsTheyCame checks a failed function's answer: the items it
// was given, untouched, and results.
func requireItemsAsTheyCame(t *testing.T, in, out string) {
	t.Helper()
	items := func(text string) string {
		rl, err := yaml.Parse(text)
		require.NoError(t, err)
		items, err := rl.Pipe(yaml.Lookup("items"))
		require.NoError(t, err)
		return items.MustString()
	}
	assert.Equal(t, items(in), items(out))
	assert.Contains(t, out, "\nresults:\n")
}

func TestHostileAliasBombPassesThrough(t *testing.T) {
	bomb := jobstream.AliasBomb
	render, _ := runBinary(t, writeFile(t, "bomb.yaml", bomb), "render", "-")
	require.Equal(t, 0, render.code, render.stderr)
	assert.Contains(t, render.stdout, "  i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n", "written back as aliases")

	krm, _ := runBinary(t, writeFile(t, "rl.yaml", wrapped(bomb, hostileJob)))
	require.Equal(t, 0, krm.code, krm.stderr)
	assert.Contains(t, krm.stdout, "    i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n")
	assert.Contains(t, krm.stdout, "name: pi-launcher", "the job beside it is expanded")
}

// TestHostileStreamOf100MB renders a stream of about 100 MB: ConfigMaps of
// 8 KB, as configMapGenerator makes from configuration files, and a job
// among every thousand of them. It must come out whole, and the memory it
// takes must grow with the stream no faster than in proportion: the peak
// is held to 4 times what a run on a tenth of the stream predicts.
func TestHostileStreamOf100MB(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []string{"render", "function"} {
		t.Run(mode, func(t *testing.T) {
			run := func(size int) (process, string, streamCounts) {
				path := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", mode, size))
				counts := writeStream(t, path, size, mode == "function")
				if mode == "render" {
					p, out := runBinary(t, "", "render", path)
					return p, out, counts
				}
				p, out := runBinary(t, path)
				return p, out, counts
			}
			floor, _, _ := run(0)
			small, _, _ := run(10 << 20)
			big, out, counts := run(100 << 20)
			for _, p := range []process{floor, small, big} {
				require.Equal(t, 0, p.code, p.stderr)
			}
			requireWholeOutput(t, out, counts)

			if big.peakRSS == 0 {
				t.Skip("this platform does not report a process's peak memory")
			}
			predicted := floor.peakRSS + 10*(small.peakRSS-floor.peakRSS)
			t.Logf("peak RSS: %d MB at rest, %d MB for 10 MB, %d MB for 100 MB (%d MB predicted)",
				floor.peakRSS>>20, small.peakRSS>>20, big.peakRSS>>20, predicted>>20)
			assert.LessOrEqual(t, big.peakRSS, 4*predicted)
		})
	}
}

// streamCounts are what a generated stream holds.
type streamCounts struct{ configMaps, jobs int }

// writeStream writes about size bytes of documents to path, as a plain
// stream or as the items of a ResourceList; size 0 writes one ConfigMap.
func writeStream(t *testing.T, path string, size int, resourceList bool) streamCounts {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	w := bufio.NewWriter(f)
	if resourceList {
		_, err = w.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
		require.NoError(t, err)
	}
	value := strings.Repeat("x", 8000)
	var counts streamCounts
	written := 0
	for i := 0; i == 0 || written < size; i++ {
		doc := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-%d\n  labels:\n    app: a%d\ndata:\n  settings: %s\n", i, i%100, value)
		counts.configMaps++
		if i%1000 == 999 {
			doc = strings.Replace(hostileJob, "name: pi", fmt.Sprintf("name: job-%d", i), 1)
			counts.configMaps, counts.jobs = counts.configMaps-1, counts.jobs+1
		}
		switch {
		case resourceList:
			doc = "- " + strings.ReplaceAll(strings.TrimSpace(doc), "\n", "\n  ") + "\n"
		case i > 0:
			doc = "---\n" + doc
		}
		n, err := w.WriteString(doc)
		require.NoError(t, err)
		written += n
	}
	require.NoError(t, w.Flush())
	return counts
}

// requireWholeOutput checks that every object came out: each ConfigMap as
// it went in, each job as its objects (the hostfile's ConfigMap, the
// Service and two Jobs).
func requireWholeOutput(t *testing.T, out string, counts streamCounts) {
	t.Helper()
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	kinds := map[string]int{}
	settings := 0
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		text := scanner.Text()
		line := strings.TrimSpace(strings.TrimPrefix(text, "- "))
		// An object's kind: at the top of a stream's document or of a
		// ResourceList's item; deeper, a result's resourceRef names it.
		if kind, ok := strings.CutPrefix(line, "kind: "); ok && len(text)-len(strings.TrimLeft(text, " ")) <= 2 {
			kinds[kind]++
		}
		if strings.HasPrefix(line, "settings: xxxxxxxx") && len(line) == len("settings: ")+8000 {
			settings++
		}
	}
	require.NoError(t, scanner.Err())
	assert.Equal(t, counts.configMaps, settings, "every ConfigMap passes through with its data")
	assert.Equal(t, counts.configMaps+counts.jobs, kinds["ConfigMap"])
	assert.Equal(t, counts.jobs, kinds["Service"])
	assert.Equal(t, 2*counts.jobs, kinds["Job"])
	assert.Zero(t, kinds["MPIJob"], "every job is expanded")
}

// TestHostileInputsOfRender gives render what a directory of manifests
// may hold besides them, and inputs that never end: each run ends, prints
// nothing, writes no output directory, and names what it refused.
func TestHostileInputsOfRender(t *testing.T) {
	outside := t.TempDir()
	dir := filepath.Join(outside, "jobs")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pi.yaml"), []byte(hostileJob), 0o644))
	secret := filepath.Join(outside, "admin.yaml")
	require.NoError(t, os.WriteFile(secret, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: admin\nstringData:\n  token: s3cr3t\n"), 0o600))
	small, _ := runBinary(t, "", "render", filepath.Join(dir, "pi.yaml"))
	require.Equal(t, 0, small.code, small.stderr)

	for _, c := range []struct{ name, link, message string }{
		{"a link to a file outside", secret, "secret.yaml: error: a symbolic link to " + secret + ", outside " + dir},
		{"a link to a device", "/dev/zero", "secret.yaml: error: a symbolic link to /dev/zero, outside " + dir},
	} {
		t.Run(c.name, func(t *testing.T) {
			link := filepath.Join(dir, "secret.yaml")
			require.NoError(t, os.Symlink(c.link, link))
			t.Cleanup(func() { assert.NoError(t, os.Remove(link)) })
			out := filepath.Join(outside, "deploy")
			for _, args := range [][]string{{"render", dir}, {"render", dir, "-o", out}, {"validate", dir}} {
				p, _ := runBinary(t, "", args...)
				assert.Equal(t, 1, p.code, "%v", args)
				assert.Empty(t, p.stdout)
				assert.Contains(t, p.stderr, c.message)
				assert.NotContains(t, p.stderr+p.stdout, "s3cr3t")
				requireNoStackTrace(t, p.stderr)
			}
			assert.NoDirExists(t, out, "nothing is written")
		})
	}

	t.Run("a device named as an argument", func(t *testing.T) {
		zero, _ := runBinary(t, "", "render", "/dev/zero")
		assert.Equal(t, 1, zero.code)
		assert.True(t, strings.HasPrefix(zero.stderr, "/dev/zero:1:1: error: not a YAML file: the control character U+0000 may not appear in YAML, not even in a quoted string (a double-quoted string may hold it as the escape \"\\x00\"); is it a binary file?\n"), zero.stderr)
		krm, _ := runBinary(t, "/dev/zero")
		assert.Equal(t, 1, krm.code)
		assert.Contains(t, krm.stderr, "<stdin>:1:1: error: not a YAML file: the control character U+0000")
		if zero.peakRSS == 0 {
			t.Skip("this platform does not report a process's peak memory")
		}
		t.Logf("peak RSS: %d MB rendering one job, %d MB refusing /dev/zero, %d MB as a function", small.peakRSS>>20, zero.peakRSS>>20, krm.peakRSS>>20)
		assert.LessOrEqual(t, zero.peakRSS, 2*small.peakRSS, "refused on its first bytes, it costs no more than a small render")
		assert.LessOrEqual(t, krm.peakRSS, 2*small.peakRSS)
	})

	t.Run("pipes named as arguments, as <(kustomize build) names one", func(t *testing.T) {
		run := func(stdin io.Reader, args ...string) process {
			cmd := exec.Command(trainfnBinary, args...)
			cmd.Stdin = stdin
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				require.NoError(t, err)
			}
			return process{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
		}
		for _, path := range []string{"/dev/stdin", "-"} {
			p := run(strings.NewReader(hostileJob), "render", path)
			require.Equal(t, 0, p.code, p.stderr)
			assert.Contains(t, p.stdout, "name: pi-launcher")
		}
		p := run(&endless{text: "# a comment that never ends\n"}, "render", "/dev/stdin")
		assert.Equal(t, 1, p.code)
		assert.True(t, strings.HasPrefix(p.stderr, "/dev/stdin: error: more than 134217728 bytes (128 MiB), the most trainfn reads from one input: split the documents into several files; is it a device or a process that never stops writing?\n"), p.stderr)
		assert.Empty(t, p.stdout)
	})
}

// endless repeats text without end.
type endless struct {
	text string
	at   int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.text[e.at]
		e.at = (e.at + 1) % len(e.text)
	}
	return len(p), nil
}

// TestHostileResourceListOfManyJobs renders a thousand jobs (an MPIJob, a
// PyTorchJob and a DIJob in turn) with render and as the items of a
// ResourceList: the two give the same objects, and the function's peak
// memory is no more than render's. The peaks are compared as a ratio, in
// one run: each moves by about a tenth from run to run with when the
// collector runs, which the bound allows; the copies it guards against
// (kyaml's writer copied every item, then encoded the list as one
// document, whose events yaml.v3 keeps to its end) doubled the function's.
func TestHostileResourceListOfManyJobs(t *testing.T) {
	stream := string(jobstream.Mixed(1000))
	render, renderOut := runBinary(t, "", "render", writeFile(t, "jobs.yaml", stream))
	require.Equal(t, 0, render.code, render.stderr)
	krm, krmOut := runBinary(t, writeFile(t, "rl.yaml", wrapped(strings.Split(stream, "---\n")...)))
	require.Equal(t, 0, krm.code, krm.stderr)

	objects := func(path string) []string {
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		nodes, err := (&kio.ByteReader{Reader: f, OmitReaderAnnotations: true}).Read()
		require.NoError(t, err)
		texts := make([]string, len(nodes))
		for i, n := range nodes {
			texts[i] = n.MustString()
		}
		return texts
	}
	rendered, answered := objects(renderOut), objects(krmOut)
	require.Greater(t, len(rendered), 3*1000, "every job renders three objects or more")
	require.Len(t, answered, len(rendered), "the function gives the objects render gives")
	for i := range rendered {
		require.Equal(t, rendered[i], answered[i], "object %d", i)
	}

	if render.peakRSS == 0 {
		t.Skip("this platform does not report a process's peak memory")
	}
	t.Logf("peak RSS for 1000 jobs: %d MB with render, %d MB as a ResourceList (%.2f times)",
		render.peakRSS>>20, krm.peakRSS>>20, float64(krm.peakRSS)/float64(render.peakRSS))
	assert.LessOrEqual(t, float64(krm.peakRSS), 1.25*float64(render.peakRSS))
}
